-- view: {pool fields}, members, leases (flat), synced (flat).
if not fence_check() then
  return redis.error_reply('NOPOOL item ' .. ITEM)
end
return {redis.call('HMGET', POOL, 'total', 'free', 'epoch', 'fenced', 'sold_out', 'version', 'want'),
  redis.call('SMEMBERS', MEMBERS), redis.call('HGETALL', LEASES), redis.call('HGETALL', SYNCED)}
