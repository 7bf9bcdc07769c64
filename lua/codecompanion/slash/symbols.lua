-- `/symbols`: an outline of a file from Tree-sitter (definitions and their first lines), so the
-- model learns a file's shape for a fraction of its tokens.
local M = {}

-- Node types that name a symbol, across parsers; declarations count at the top level only
-- (inside a function they are its local variables).
local SYMBOL =
  { "function", "method", "class", "struct", "interface", "enum", "impl", "module", "trait" }
local NOT_SYMBOL =
  { "call", "parameter", "body", "argument", "name", "identifier", "expression", "table", "list" }
local MAX_DEPTH = 4

local function has_word(node_type, words)
  for _, word in ipairs(words) do
    if node_type:find(word, 1, true) then
      return true
    end
  end
  return false
end

local function is_symbol(node_type, depth)
  if has_word(node_type, NOT_SYMBOL) then
    return false
  end
  if has_word(node_type, SYMBOL) then
    return true
  end
  return depth == 0
    and (node_type:find("declaration", 1, true) or node_type:find("definition", 1, true)) ~= nil
end

local function walk(node, lines, depth, out, seen)
  for child in node:iter_children() do
    if child:named() then
      local child_depth = depth
      local row = child:start()
      if is_symbol(child:type(), depth) then
        child_depth = depth + 1
        if not seen[row] then
          seen[row] = true
          table.insert(
            out,
            ("%s%d: %s"):format(string.rep("  ", depth), row + 1, vim.trim(lines[row + 1] or ""))
          )
        end
      end
      if child_depth < MAX_DEPTH then
        walk(child, lines, child_depth, out, seen)
      end
    end
  end
end

-- Without a parser for the language (stock Neovim has a few: Lua, C, Vim script, Markdown),
-- definitions are the lines a definition keyword starts, after any modifiers.
local KEYWORDS = {
  "def",
  "class",
  "function",
  "fn",
  "func",
  "struct",
  "enum",
  "interface",
  "trait",
  "impl",
  "module",
  "type",
  "macro",
  "sub",
  "proc",
}
local MODIFIERS = {
  "pub",
  "pub(crate)",
  "export",
  "default",
  "async",
  "static",
  "public",
  "private",
  "protected",
  "abstract",
  "final",
  "local",
  "declare",
  "unsafe",
  "extern",
}

--- The keyword a definition line starts with (after its modifiers), or nil.
---@param text string the line without its indentation
---@return string?
local function definition(text)
  local words = vim.split(text, "%s+", { trimempty = true })
  local i = 1
  while words[i] and vim.tbl_contains(MODIFIERS, words[i]) do
    i = i + 1
  end
  local word = words[i] and words[i]:match("^([%a_]+)") or nil
  local after = word and words[i]:sub(#word + 1) or ""
  if word and vim.tbl_contains(KEYWORDS, word) and (words[i + 1] or after ~= "") then
    return word
  end
  return nil
end

--- The outline by keywords: each definition line, indented by its depth in the file.
---@param lines string[]
---@return string[]
local function keyword_outline(lines)
  local out, indents = {}, {}
  for row, line in ipairs(lines) do
    local indent, text = line:match("^(%s*)(.*)$")
    if definition(text) then
      local width = vim.fn.strdisplaywidth(indent)
      while #indents > 0 and indents[#indents] >= width do
        table.remove(indents)
      end
      if #indents < MAX_DEPTH then
        table.insert(out, ("%s%d: %s"):format(string.rep("  ", #indents), row, vim.trim(text)))
      end
      table.insert(indents, width)
    end
  end
  return out
end

--- A context item with the outline of `path`, or nil (a line says why).
---@param path string
---@return codecompanion.ContextItem?
function M.outline(path)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  local notify = require("codecompanion.render").notify
  if vim.fn.filereadable(full) ~= 1 then
    notify(("/symbols: no readable file %s"):format(path), "warn")
    return nil
  end
  local lines = vim.fn.readfile(full)
  local ft = vim.filetype.match({ filename = full, contents = lines }) or ""
  local lang = vim.treesitter.language.get_lang(ft) or ft
  local ok, parser = pcall(vim.treesitter.get_string_parser, table.concat(lines, "\n"), lang)
  local out = {}
  if ok and parser then
    walk(parser:parse()[1]:root(), lines, 0, out, {})
  else
    out = keyword_outline(lines)
    if #out > 0 then
      local why = "/symbols: no Tree-sitter parser for %s (filetype %q): definitions found by "
        .. "their keywords"
      notify(why:format(path, ft), "info")
    end
  end
  if #out == 0 then
    notify(("/symbols: no symbols found in %s"):format(path), "warn")
    return nil
  end
  return {
    kind = "outline",
    path = vim.fn.fnamemodify(full, ":~:."),
    filetype = ft,
    lines = out,
    numbered = false,
  }
end

return M
