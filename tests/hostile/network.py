# Phone home: connect to the grading machine's own loopback (where the test
# listens), to public DNS servers, and resolve a name; print what worked.
import socket

for host, port in (("127.0.0.1", @@PORT@@), ("1.1.1.1", 53), ("8.8.8.8", 53)):
    try:
        with socket.create_connection((host, port), timeout=0.5) as connection:
            connection.sendall(b"@@MARKER@@ hello from the worker\n")
            print("@@MARKER@@ connected to", host, port)
    except OSError as error:
        print("@@MARKER@@ no connection to", host, port, type(error).__name__)
try:
    print("@@MARKER@@ resolved", socket.gethostbyname("example.com"))
except OSError as error:
    print("@@MARKER@@ no name resolution", type(error).__name__)
