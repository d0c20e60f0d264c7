//! The Lua scripts of the token store: each runs atomically in Redis.
//!
//! Keys, for a token key `K` under prefix `P`: `P:tokens:K` (a hash: `v` the version in
//! decimal, `d` the entry's bytes), `P:lease:K` (`fence:holder`, with a time to live) and
//! `P:fence:K` (the fencing counter).

/// Takes the lease if nobody holds it: `KEYS[1]` the lease, `KEYS[2]` the fencing counter,
/// `ARGV[1]` the holder, `ARGV[2]` the time to live in ms. The fencing number, or 0 when held.
pub(crate) const LEASE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local f = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], f .. ':' .. ARGV[1], 'PX', ARGV[2])
return f
";

/// Extends the lease if `ARGV[1]` (`fence:holder`) still holds it, by `ARGV[2]` ms: 1 or 0.
pub(crate) const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Deletes the lease if `ARGV[1]` still holds it: 1 or 0.
pub(crate) const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

/// The compare-and-set write: `KEYS[1]` the lease, `KEYS[2]` the entry; `ARGV[1]` the lease's
/// value (empty: a write kept from an outage, made without a lease), `ARGV[2]` the version
/// expected (`0`: none), `ARGV[3]` the new version, `ARGV[4]` the bytes, `ARGV[5]` the entry's
/// time to live in ms. The new version, -1 when the lease is not held, -2 when the version is
/// not the one expected.
pub(crate) const WRITE: &str = r"
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local t = redis.call('TYPE', KEYS[2])['ok']
local v = '0'
if t == 'hash' then
  v = redis.call('HGET', KEYS[2], 'v') or '0'
elseif t ~= 'none' then
  v = 'other'
end
if v ~= ARGV[2] then return -2 end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'v', ARGV[3], 'd', ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return tonumber(ARGV[3])
";

/// Reads an entry within a byte bound: `KEYS[1]` the entry, `ARGV[1]` the most bytes. `{}`
/// when absent, `{'large'}` when over the bound, `{'type'}` when not a hash, else `{v, d}`
/// (either may be false when missing).
pub(crate) const READ: &str = r"
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return {} end
if t ~= 'hash' then return {'type'} end
if redis.call('HSTRLEN', KEYS[1], 'd') > tonumber(ARGV[1]) then return {'large'} end
if redis.call('HSTRLEN', KEYS[1], 'v') > 20 then return {'large'} end
return redis.call('HMGET', KEYS[1], 'v', 'd')
";

/// Removes a damaged entry if it is still what was read: `KEYS[1]` the entry, `ARGV[1]` its
/// `d` as read (empty: missing), `ARGV[2]` the most bytes. An entry that is not a hash, or is
/// over the bound, is removed too. 1 or 0.
pub(crate) const REMOVE: &str = r"
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return 0 end
if t ~= 'hash' then return redis.call('DEL', KEYS[1]) end
if redis.call('HSTRLEN', KEYS[1], 'd') > tonumber(ARGV[2])
  or redis.call('HSTRLEN', KEYS[1], 'v') > 20 then
  return redis.call('DEL', KEYS[1])
end
local d = redis.call('HGET', KEYS[1], 'd') or ''
if d == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";
