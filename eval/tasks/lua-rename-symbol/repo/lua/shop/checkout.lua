local cart = require("shop.cart")

local M = {}

function M.summary(items)
  return string.format("Total: %.2f", cart.calc_total(items))
end

return M
