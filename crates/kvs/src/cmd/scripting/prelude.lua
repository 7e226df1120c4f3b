-- The scripting sandbox, run once when a thread's Lua state is made.
--
-- Arguments: the globals table G, the bridge table (filled per run by the server with
-- `call`, the function that runs one command), and the helpers written in Rust.
-- Returns the environment scripts run in.
--
-- Scripts see G through a proxy, `env`: reads fall through to G (and an undefined
-- name is an error), every write to the proxy is refused, so a script cannot leave
-- state behind for the next one. Library tables are proxies too. Chunks made by
-- loadstring get the same environment, and binary chunks are refused.
local G, bridge, helpers = ...
local error, type, tostring, rawget, rawset = error, type, tostring, rawget, rawset
local setmetatable, getmetatable, pcall, xpcall = setmetatable, getmetatable, pcall, xpcall
local loadstring, setfenv, select = loadstring, setfenv, select
local where, killed = helpers.where, helpers.killed

local readonly = setmetatable({}, { __mode = 'k' })

local function deny()
  error('Attempt to modify a readonly table', 2)
end

-- A read-only view of `t`: reads see `t`, writes and metatable changes are refused.
local function protect(t)
  local meta = { __index = t, __newindex = deny }
  local shown = setmetatable({}, { __index = meta, __newindex = deny, __metatable = false })
  readonly[shown] = true
  meta.__metatable = shown
  local proxy = setmetatable({}, meta)
  readonly[proxy] = true
  return proxy
end

-- Reading a global that does not exist is an error, as Redis has it.
setmetatable(G, {
  __index = function(_, k)
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end,
})

local env = protect(G)

-- Functions that would reach outside the sandbox or around the read-only tables.
for _, name in ipairs({ 'loadfile', 'dofile', 'print', 'load', 'getfenv', 'setfenv',
                        'module', 'require', 'newproxy', 'gcinfo' }) do
  rawset(G, name, nil)
end

rawset(G, 'setmetatable', function(t, m)
  if readonly[t] then error('Attempt to modify a readonly table', 2) end
  return setmetatable(t, m)
end)
rawset(G, 'rawset', function(t, k, v)
  if readonly[t] then error('Attempt to modify a readonly table', 2) end
  return rawset(t, k, v)
end)
rawset(G, 'loadstring', function(s, name)
  if type(s) == 'string' and s:byte(1) == 27 then
    return nil, 'binary chunks are not allowed'
  end
  local f, e = loadstring(s, name)
  if f then setfenv(f, env) end
  return f, e
end)

-- pcall as Redis 7 has it: an error table raised by redis.call is caught as its text.
-- A killed script's error is not caught: it ends the script.
local function caught(ok, ...)
  if not ok then
    local e = ...
    if killed() then error(e, 0) end
    if type(e) == 'table' and type(rawget(e, 'err')) == 'string' then
      return false, rawget(e, 'err')
    end
  end
  return ok, ...
end
rawset(G, 'pcall', function(...) return caught(pcall(...)) end)

local redis = {}
for k, v in pairs(helpers.redis) do redis[k] = v end
-- The arguments go to the bridge as one table (a Rust function takes fewer
-- arguments than a script may pass: `redis.call('LPUSH', k, unpack(t))`).
redis.call = function(...)
  local v, failed = bridge.call({ n = select('#', ...), ... })
  if failed then error(v, 0) end
  return v
end
redis.pcall = function(...)
  return (bridge.call({ n = select('#', ...), ... }))
end
redis.error_reply = function(msg)
  if type(msg) ~= 'string' then
    return { err = 'ERR wrong number or type of arguments' }
  end
  if msg:sub(1, 1) == '-' then msg = msg:sub(2) end
  if not msg:find(' ', 1, true) then msg = 'ERR ' .. msg end
  return { err = msg }
end
redis.status_reply = function(msg)
  if type(msg) ~= 'string' then
    return { err = 'ERR wrong number or type of arguments' }
  end
  return { ok = msg }
end
redis.setresp = function(v)
  if v ~= 2 and v ~= 3 then error('RESP version must be 2 or 3.', 2) end
  bridge.resp = v
end
redis.replicate_commands = function() return true end
redis.set_repl = function(v)
  if type(v) ~= 'number' or v < 0 or v > 3 then
    error('Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.', 2)
  end
end
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.register_function = function(...)
  return bridge.register(...)
end

rawset(G, 'redis', protect(redis))
for _, lib in ipairs({ 'cjson', 'bit', 'cmsgpack', 'struct' }) do
  if rawget(G, lib) then rawset(G, lib, protect(rawget(G, lib))) end
end
rawset(G, '_G', env)

-- What an error that ends a script becomes: a table with the reply's text and the
-- line of the script it was raised at.
local function handler(e)
  local line = where()
  if type(e) == 'table' and type(rawget(e, 'err')) == 'string' then
    return { err = rawget(e, 'err'), line = line }
  end
  return { err = 'ERR ' .. tostring(e), line = line }
end

-- Runs a compiled script (no arguments) or a function (with KEYS and ARGV).
bridge.run = function(f, keys, argv)
  if keys == nil then
    return xpcall(f, handler)
  end
  return xpcall(function() return f(keys, argv) end, handler)
end

return env
