//! The `rein` binary.

fn main() {}
