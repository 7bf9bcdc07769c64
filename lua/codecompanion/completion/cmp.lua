-- nvim-cmp source for `@{tool}` / `@{group}` in chat buffers. Registered by setup() when cmp is installed.
local source = {}

function source.new()
  return setmetatable({}, { __index = source })
end

function source:is_available()
  return vim.bo.filetype == "codecompanion"
end

function source:get_trigger_characters()
  return { "@" }
end

function source:get_keyword_pattern()
  return [[@{\?\w*]]
end

function source:complete(_, callback)
  local items = {}
  for _, item in ipairs(require("codecompanion.complete").items()) do
    table.insert(items, {
      label = item.word,
      insertText = item.word,
      kind = item.kind == "group" and 9 or 3,
      documentation = item.menu,
    })
  end
  callback({ items = items, isIncomplete = false })
end

return source
