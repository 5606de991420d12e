//! Secrets masked out of the file a long output was saved to, before anyone reads it; the
//! result itself is masked by [`crate::secrets::mask_output`].

use std::sync::Arc;

use crate::secrets::Secrets;

/// Masks secret values in the file a result's whole output was saved to (secrets never
/// reach the disk). Done before the result is masked: the path is read from its text.
pub(super) async fn mask_saved_output(
    secrets: &Arc<Secrets>,
    content: &str,
    offload_dir: &std::path::Path,
) {
    if !secrets.any() {
        return;
    }
    let Some(path) = rein_tools::saved_output_path(content) else {
        return;
    };
    // Only rein's own files: a command can print a line that looks like the notice.
    let offload_dir = std::path::absolute(offload_dir).unwrap_or_else(|_| offload_dir.into());
    let path = std::path::PathBuf::from(path);
    if !path.starts_with(&offload_dir)
        || path
            .components()
            .any(|c| c == std::path::Component::ParentDir)
        || std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file())
    {
        return;
    }
    let secrets = Arc::clone(secrets);
    let masked = tokio::task::spawn_blocking(move || {
        let result = secrets.redact_file(&path);
        if result.is_err() {
            // A file that cannot be masked must not keep the secrets: it goes.
            let _ = std::fs::remove_file(&path);
        }
        result
    })
    .await;
    debug_assert!(masked.is_ok(), "masking a saved output panicked");
}
