//! rein-tools integration tests: one binary, one module per feature.

mod support;

mod background;
mod bash;
mod bash_output;
mod budget;
mod child;
mod client_files;
mod confinement_race;
mod edit_file;
mod edit_forgiving;
mod edit_ladder;
mod glob;
mod grep;
mod orphans;
mod paths;
mod read_file;
mod registry;
mod sandbox;
mod write_file;
