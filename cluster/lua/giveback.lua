-- giveback: ARGV[4] seq, ARGV[5] units. free += units, the member's lease
-- -= units (never below 0). Reopens a sold-out item. Returns units.
local refused = member_check()
if refused then
  return refused
end
local st, v = op_check('give', ARGV[4], ARGV[5])
if st == 'replay' then
  return tonumber(v)
elseif st == 'err' then
  return redis.error_reply(v)
end
local u, held = tonumber(ARGV[5]), num(redis.call('HGET', LEASES, MEMBER))
if u > held then
  return redis.error_reply('HELD ' .. MEMBER .. ' holds ' .. fmt(held) .. ' units of item ' ..
    ITEM .. ', cannot give back ' .. ARGV[5])
end
local before = num(redis.call('HGET', POOL, 'free'))
redis.call('HINCRBY', POOL, 'free', ARGV[5])
redis.call('HINCRBY', LEASES, MEMBER, fmt(-u))
redis.call('HSET', OPS, MEMBER, ARGV[4] .. ':give:' .. ARGV[5] .. ':' .. ARGV[5])
pool_moved(before, false)
settle()
return u
