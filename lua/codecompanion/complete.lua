-- `@` completion of tools and groups: an omnifunc that needs no plugin.
local M = {}

local cache = { items = nil, at = 0 }

local function items()
  local now = vim.uv.now()
  if cache.items and now - cache.at < 5000 then
    return cache.items
  end
  local result = require("codecompanion.host").request("completion_items", {})
  cache.items, cache.at = result or {}, now
  return cache.items
end

M.items = items

--- Items in the LSP CompletionItem shape, for nvim-cmp and blink.cmp.
function M.lsp_items()
  local result = {}
  for _, item in ipairs(items()) do
    table.insert(result, {
      label = item.word,
      insertText = item.word,
      kind = item.kind == "group" and 9 or 3, -- Module / Function
      documentation = item.menu,
    })
  end
  return result
end

function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line():sub(1, vim.fn.col(".") - 1)
    local start = line:find("@[%w_{:%-]*$") -- `:` for @{mcp:<server>}
    return start and (start - 1) or -3
  end
  local result = {}
  local query = base:gsub("^@{?", "")
  for _, item in ipairs(items()) do
    local name = item.word:gsub("^@{", ""):gsub("}$", "")
    if name:find(query, 1, true) == 1 then
      table.insert(result, { word = item.word, kind = item.kind, menu = item.menu })
    end
  end
  return result
end

return M
