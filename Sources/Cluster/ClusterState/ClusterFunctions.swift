/// The cluster's server-side code: one Redis function library, loaded with `FUNCTION LOAD REPLACE`.
///
/// Functions, not EVALSHA scripts: a library is kept in the append-only file and survives a Redis restart,
/// while the script cache does not (a restarted Redis answers NOSCRIPT). A Redis restarted empty has neither;
/// callers load the library again when a call answers "Function not found".
///
/// Every function touches only the keys it is given, so each stays one atomic step.
enum ClusterFunctions {
    /// Bumped whenever a function changes meaning; `cr_version` returns it.
    static let version = "2"

    static let library = """
        #!lua name=clubroom

        local function now_ms()
          local t = redis.call('TIME')
          return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        end

        local function split(text)
          local parts = {}
          for part in string.gmatch(text, '[^|]+') do parts[#parts + 1] = part end
          return parts
        end

        redis.register_function{function_name = 'cr_version', flags = {'no-writes'}, callback = function()
          return '\(version)'
        end}

        -- KEYS: node key, nodes set, slots hash, generation. ARGV: name, incarnation, info, ttl ms,
        -- generation candidate, highest slot, slot wanted (0: any). Registers a node or refreshes it.
        redis.register_function('cr_register', function(keys, args)
          local name, inc, info, ttl = args[1], args[2], args[3], tonumber(args[4])
          local existing = redis.call('GET', keys[1])
          if existing then
            local fields = split(existing)
            if fields[1] ~= inc then return {'NAME_TAKEN', existing} end
          end
          redis.call('SET', keys[4], args[5], 'NX')
          local generation = redis.call('GET', keys[4])
          local now = now_ms()
          local holder = name .. '|' .. inc
          local wanted = tonumber(args[7])
          local slot = nil
          if wanted > 0 then
            local current = redis.call('HGET', keys[3], tostring(wanted))
            if current then
              local fields = split(current)
              if fields[1] .. '|' .. fields[2] == holder or tonumber(fields[3]) < now then slot = wanted end
            else
              slot = wanted
            end
            if not slot and existing then return {'SLOT_LOST', current} end
          end
          if not slot then
            for candidate = 1, tonumber(args[6]) do
              local current = redis.call('HGET', keys[3], tostring(candidate))
              if not current or tonumber(split(current)[3]) < now then slot = candidate break end
            end
          end
          if not slot then return {'NO_SLOT'} end
          redis.call('HSET', keys[3], tostring(slot), holder .. '|' .. tostring(now + ttl))
          redis.call('SET', keys[1], inc .. '|' .. tostring(slot) .. '|' .. info, 'PX', ttl)
          redis.call('SADD', keys[2], name)
          return {'OK', tostring(slot), generation}
        end)

        -- KEYS: node key, slots hash. ARGV: name, incarnation, slot. A node leaving on purpose.
        redis.register_function('cr_unregister', function(keys, args)
          local existing = redis.call('GET', keys[1])
          if existing and split(existing)[1] == args[2] then redis.call('DEL', keys[1]) end
          local current = redis.call('HGET', keys[2], args[3])
          if current then
            local fields = split(current)
            if fields[1] == args[1] and fields[2] == args[2] then redis.call('HDEL', keys[2], args[3]) end
          end
          return 'OK'
        end)

        -- KEYS: owner, epoch. ARGV: node, incarnation, lease ms, epoch floor.
        -- A free room gets the next epoch (never below the floor, so epochs keep rising across a Redis that
        -- lost its data); a room this incarnation holds is renewed; a room held by another is reported.
        redis.register_function('cr_acquire', function(keys, args)
          local current = redis.call('GET', keys[1])
          local prefix = args[1] .. '|' .. args[2] .. '|'
          if current then
            if string.sub(current, 1, #prefix) == prefix then
              redis.call('PEXPIRE', keys[1], args[3])
              return {'OK', string.sub(current, #prefix + 1)}
            end
            return {'HELD', current, redis.call('PTTL', keys[1])}
          end
          local epoch = redis.call('INCR', keys[2])
          local floor = tonumber(args[4])
          if epoch <= floor then
            epoch = floor + 1
            redis.call('SET', keys[2], tostring(epoch))
          end
          redis.call('SET', keys[1], prefix .. tostring(epoch), 'PX', args[3])
          return {'OK', tostring(epoch)}
        end)

        -- KEYS: owner. ARGV: token, lease ms.
        redis.register_function('cr_renew', function(keys, args)
          local current = redis.call('GET', keys[1])
          if current == args[1] then
            redis.call('PEXPIRE', keys[1], args[2])
            return {'OK'}
          end
          return {'FENCED', current or ''}
        end)

        -- KEYS: owner. ARGV: token.
        redis.register_function('cr_release', function(keys, args)
          if redis.call('GET', keys[1]) == args[1] then
            redis.call('DEL', keys[1])
            return 1
          end
          return 0
        end)

        -- KEYS: owner, epoch, events, meta, peers, chat, audit, bans, bans version, lifts.
        -- ARGV: token, epoch, prev id, new id, request id, kind, body, request cursor ('' for none), time ms,
        -- stream length kept, chat kept, audit kept, then operations as (op, field, value) triples.
        -- One atomic step: the fence (the owner key and the epoch both match the token), then a retry of an
        -- entry already written answers DUP, then the chain (prev must be the last id), then the entry, the state
        -- operations and the cursor.
        redis.register_function('cr_append', function(keys, args)
          local current = redis.call('GET', keys[1])
          if current ~= args[1] or redis.call('GET', keys[2]) ~= args[2] then
            return {'FENCED', current or ''}
          end
          if #redis.call('XRANGE', keys[3], args[4], args[4]) > 0 then return {'DUP', args[4]} end
          local last = redis.call('HGET', keys[4], 'lastId') or '0-0'
          if last ~= args[3] then return {'GAP', last} end
          redis.call('XADD', keys[3], 'MAXLEN', '~', args[10], args[4],
            'prev', args[3], 'rid', args[5], 'epoch', args[2], 'kind', args[6], 'body', args[7])
          local index = 13
          while index + 2 <= #args do
            local op, field, value = args[index], args[index + 1], args[index + 2]
            if op == 'peer' then redis.call('HSET', keys[5], field, value)
            elseif op == 'unpeer' then redis.call('HDEL', keys[5], field)
            elseif op == 'nopeers' then redis.call('DEL', keys[5])
            elseif op == 'meta' then redis.call('HSET', keys[4], field, value)
            elseif op == 'unmeta' then redis.call('HDEL', keys[4], field)
            elseif op == 'chat' then
              redis.call('RPUSH', keys[6], value)
              redis.call('LTRIM', keys[6], -tonumber(args[11]), -1)
            elseif op == 'nochat' then redis.call('DEL', keys[6])
            elseif op == 'ban' then
              redis.call('HSET', keys[8], field, value)
              redis.call('INCR', keys[9])
            elseif op == 'unban' then
              redis.call('HDEL', keys[8], field)
              redis.call('HSET', keys[10], field, value)
              redis.call('INCR', keys[9])
            elseif op == 'audit' then
              redis.call('RPUSH', keys[7], value)
              redis.call('LTRIM', keys[7], -tonumber(args[12]), -1)
            else
              return redis.error_reply('ERR unknown state operation ' .. op)
            end
            index = index + 3
          end
          redis.call('HSET', keys[4], 'lastId', args[4], 'lastAt', args[9])
          if args[8] ~= '' then redis.call('HSET', keys[4], 'reqCursor', args[8]) end
          return {'OK', args[4]}
        end)

        -- KEYS: bans, bans version, lifts. ARGV: identity, at (Unix seconds). The operator lifts a ban outside any
        -- room (clubroom bans --cluster). Returns {1} when there was one.
        redis.register_function('cr_ban_lift', function(keys, args)
          if redis.call('HDEL', keys[1], args[1]) == 0 then return {0} end
          redis.call('HSET', keys[3], args[1], args[2])
          redis.call('INCR', keys[2])
          return {1}
        end)

        -- KEYS: bans, bans version, lifts. ARGV: (identity, at, record) triples.
        -- A node's own bans that the cluster does not have (made while it ran alone, or kept while Redis lost its
        -- data), except those lifted in the cluster at or after they were made. Returns how many it added.
        redis.register_function('cr_ban_carry', function(keys, args)
          local added = 0
          local index = 1
          while index + 2 <= #args do
            local identity, at = args[index], tonumber(args[index + 1])
            local lifted = redis.call('HGET', keys[3], identity)
            if redis.call('HEXISTS', keys[1], identity) == 0 and (not lifted or tonumber(lifted) < at) then
              redis.call('HSET', keys[1], identity, args[index + 2])
              added = added + 1
            end
            index = index + 3
          end
          if added > 0 then redis.call('INCR', keys[2]) end
          return {added}
        end)
        """
}
