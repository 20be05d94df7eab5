"""Murmur's A2A door, spoken as a client: the client and its JSON-RPC, the one SSE
parser, delegation (`murmur:message/send`) and the network allow-list."""
