-- blink.cmp source for `@{tool}` / `@{group}`; add `codecompanion = { module = "codecompanion.completion.blink" }`
-- to blink's `sources.providers` (setup() does it when blink is loaded).
local source = {}

function source.new()
  return setmetatable({}, { __index = source })
end

function source:enabled()
  return vim.bo.filetype == "codecompanion"
end

function source:get_trigger_characters()
  return { "@" }
end

function source:get_completions(_, callback)
  local items = require("codecompanion.complete").lsp_items()
  callback({ items = items, is_incomplete_forward = false, is_incomplete_backward = false })
  return function() end
end

return source
