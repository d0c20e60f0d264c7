//! The `alloc` items every module of the core uses, named the same with and without the `std`
//! feature: each module imports them with `use crate::prelude::*;`. With `std` they are the very
//! types the standard prelude names (`std` re-exports them from `alloc`); without it the
//! standard prelude is absent and this module stands in for it.

#[allow(unused_imports)]
pub(crate) use alloc::{
    borrow::{Cow, ToOwned},
    boxed::Box,
    collections::{BTreeMap, BTreeSet, VecDeque},
    format,
    string::{String, ToString},
    vec,
    vec::Vec,
};
