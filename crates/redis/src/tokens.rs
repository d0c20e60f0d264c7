//! Tokens in Redis, with one refresh per grant across the fleet.
