-- forget: ARGV[4] the member gone for good, ARGV[5] what it held. Its
-- lease becomes held (its units stay counted), it leaves the members.
-- Fenced: counts as its sync (1 if that unfenced the item, else 0).
-- Not fenced: free changes by the difference (an OVERSOLD error, nothing
-- applied, if that would take free below 0); returns 1.
if not fence_check() then
  return redis.error_reply('NOPOOL item ' .. ITEM)
end
local gone, held = ARGV[4], ARGV[5]
if not is_member(gone) then
  return redis.error_reply('NOMEMBER ' .. gone .. ' of item ' .. ITEM)
end
local p = redis.call('HMGET', POOL, 'fenced', 'free')
if p[1] ~= '1' then
  local nf = num(p[2]) + num(redis.call('HGET', LEASES, gone)) - tonumber(held)
  if nf < 0 then
    return redis.error_reply('OVERSOLD item ' .. ITEM .. ': ' .. gone .. ' holding ' .. held ..
      ' takes free below 0')
  end
  redis.call('HSET', POOL, 'free', fmt(nf))
  pool_moved(num(p[2]), false)
end
redis.call('HSET', LEASES, gone, held)
redis.call('SREM', MEMBERS, gone)
redis.call('HDEL', SYNCED, gone)
redis.call('HDEL', DRY, gone)
if p[1] == '1' then
  return rebuild()
end
settle()
return 1
