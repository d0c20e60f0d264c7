//! The catalog cache, era hints, task handles and tool pins in Redis.
