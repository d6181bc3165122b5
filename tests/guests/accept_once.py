# accept_once.py PORT: accepts one TCP connection on 127.0.0.1:PORT, answers
# "pong " and what it read, and prints what it got.
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
print("listening", flush=True)
c, addr = s.accept()
data = c.recv(100)
c.sendall(b"pong " + data)
c.close()
print("got", data, addr[0])
