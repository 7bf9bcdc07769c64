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
  callback({ items = require("codecompanion.complete").lsp_items(), isIncomplete = false })
end

return source
