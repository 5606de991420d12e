//! A scriptable mock model server for rein's tests and benchmarks.
