-- nvim-cmp source for chat buffers: `@{tool}`, variables (`#{buffer}`...) and slash commands.
-- Registered once by setup() when cmp is installed; it answers through cmp's callback.
local source = {}

--- A new source (the completion plugin calls it).
---@return table
function source.new()
  return setmetatable({}, { __index = source })
end

--- Only in chat buffers.
---@return boolean
function source:is_available()
  return vim.bo.filetype == "codecompanion"
end

--- `@` tools, `#` variables, `/` slash commands.
---@return string[]
function source:get_trigger_characters()
  return { "@", "#", "/" }
end

--- A word: `@`/`#` with an optional `{`, or `/` and a name (a Vim regex).
---@return string
function source:get_keyword_pattern()
  return [[\%([@#]{\?\w*\|/\w*\)]]
end

--- Items for cmp, through its callback (never waiting on the host).
---@param _ table the completion request
---@param callback fun(response: table)
function source:complete(_, callback)
  require("codecompanion.complete").fetch(function(items)
    callback({ items = require("codecompanion.complete").lsp_items(items), isIncomplete = false })
  end)
end

--- A chosen slash command runs its picker (the typed word is removed first).
---@param item lsp.CompletionItem
---@param callback fun(item: lsp.CompletionItem)
function source:execute(item, callback)
  local word = item.label
  if require("codecompanion.complete").is_command(word) then
    local complete = require("codecompanion.complete")
    local bufnr = vim.api.nvim_get_current_buf()
    complete.remove_before_cursor(word)
    vim.schedule(function()
      complete.run_command(bufnr, word)
    end)
  end
  callback(item)
end

return source
