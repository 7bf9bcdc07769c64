package.path = "./lua/?.lua;" .. package.path
local cart = require("shop.cart")
local checkout = require("shop.checkout")

local items = { { price = 2.5, qty = 2 }, { price = 1, qty = 3 } }
print(cart.calc_total(items))
print(checkout.summary(items))
