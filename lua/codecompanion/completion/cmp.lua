-- nvim-cmp source for chat buffers: `@{tool}`, variables (`#{buffer}`...) and slash commands.
-- Registered once by setup() when cmp is installed; it answers through cmp's callback.
local source = {}

function source.new()
  return setmetatable({}, { __index = source })
end

function source:is_available()
  return vim.bo.filetype == "codecompanion"
end

function source:get_trigger_characters()
  return { "@", "#", "/" }
end

function source:get_keyword_pattern()
  return [[\%([@#]{\?\w*\|/\w*\)]]
end

function source:complete(_, callback)
  require("codecompanion.complete").fetch(function(items)
    callback({ items = require("codecompanion.complete").lsp_items(items), isIncomplete = false })
  end)
end

--- A chosen slash command runs its picker (the typed word is removed first).
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
