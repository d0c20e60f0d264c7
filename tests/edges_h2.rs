//! The HTTP/2 codec's HPACK and frame layers at the edges of their limits and decisions, through
//! their internal API (`unstable-internals`): each test here kills a mutant of `src/h2/hpack/` or
//! `src/h2/frame.rs` that the codec's other tests let live (docs/mutants.md, `scripts/mutants.sh
//! h2-hpack h2-frame`).
