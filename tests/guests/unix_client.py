# unix_client.py PATH: connects to the Unix socket PATH, sends "hello" and
# prints the answer.
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"hello")
print("got", s.recv(100))
