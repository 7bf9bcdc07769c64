-- blink.cmp source for chat buffers: `@{tool}`, variables (`#{buffer}`...) and slash commands; add
-- `codecompanion = { module = "codecompanion.completion.blink" }` to blink's `sources.providers`
-- (setup() does it when blink is loaded). It answers through blink's callback.
local source = {}

--- A new source (the completion plugin calls it).
---@return table
function source.new()
  return setmetatable({}, { __index = source })
end

--- Only in chat buffers.
---@return boolean
function source:enabled()
  return vim.bo.filetype == "codecompanion"
end

--- `@` tools, `#` variables, `/` slash commands.
---@return string[]
function source:get_trigger_characters()
  return { "@", "#", "/" }
end

--- Items for blink, through its callback (never waiting on the host).
---@param _ table the completion context
---@param callback fun(response: table)
---@return fun() cancel
function source:get_completions(_, callback)
  local cancelled = false
  require("codecompanion.complete").fetch(function(items)
    if not cancelled then
      local lsp = require("codecompanion.complete").lsp_items(items)
      callback({ items = lsp, is_incomplete_forward = false, is_incomplete_backward = false })
    end
  end)
  return function()
    cancelled = true
  end
end

--- A chosen slash command runs its picker instead of staying in the message.
---@param _ table the completion context
---@param item lsp.CompletionItem
---@param callback fun()
---@param default_implementation? fun()
function source:execute(_, item, callback, default_implementation)
  local word = item.label
  if default_implementation then
    default_implementation()
  end
  if require("codecompanion.complete").is_command(word) then
    local bufnr = vim.api.nvim_get_current_buf()
    vim.schedule(function()
      local complete = require("codecompanion.complete")
      complete.remove_before_cursor(word)
      complete.run_command(bufnr, word)
    end)
  end
  callback()
end

return source
