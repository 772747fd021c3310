
¦
proto_legacy.protolegacy"‡
Order
id (Rid!
note (	:none "quoted"Rnote
prio (:-5Rprio(
lines (2.legacy.Order.LineRlines2
status (2.legacy.Order.Status:OPENRstatus.
Line
sku (	Rsku
price (Rprice"
Status
OPEN

CLOSED*dÈ