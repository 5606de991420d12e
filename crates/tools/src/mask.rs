//! Masking what a command's output saves to disk. The agent knows the secrets; the tools
//! only pass each output through the masker they are given, piece by piece as it arrives.

use std::sync::Arc;

/// Gives a masker for each output saved to disk.
pub trait OutputMask: Send + Sync {
    /// A masker for one output, from its first byte.
    fn stream(&self) -> Box<dyn MaskStream>;
}

/// Masks one output that arrives in pieces (holding back what may be the start of a secret).
pub trait MaskStream: Send {
    /// Takes `piece`; appends to `out` what is final, masked.
    fn push(&mut self, piece: &[u8], out: &mut Vec<u8>);
    /// Ends the output: appends to `out` what was held back, masked.
    fn finish(&mut self, out: &mut Vec<u8>);
}

/// The masker of a tool configuration, shared.
#[derive(Clone)]
pub struct SharedMask(pub Arc<dyn OutputMask>);

impl std::fmt::Debug for SharedMask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedMask")
    }
}
