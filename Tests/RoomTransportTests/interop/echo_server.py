"""A `websockets` echo server for testing the Clubroom client.

Prints its port on the first line, then serves for at most 60 seconds.
Messages: "fragment" is answered with a message in three fragments, "path" with the request path,
"auth" with the Authorization header, "close CODE REASON" closes with that code; anything else is echoed.
Messages over 1024 bytes close the connection with 1009; the server pings every 0.2 s.
"""

import asyncio

from websockets.asyncio.server import serve


async def handler(ws):
    async for message in ws:
        if message == "fragment":
            await ws.send(["a", "b", "c"])
        elif message == "path":
            await ws.send(ws.request.path)
        elif message == "auth":
            await ws.send(ws.request.headers.get("Authorization", ""))
        elif isinstance(message, str) and message.startswith("close "):
            _, code, reason = message.split(" ", 2)
            await ws.close(int(code), reason)
            return
        else:
            await ws.send(message)


async def main():
    async with serve(handler, "127.0.0.1", 0, max_size=1024, ping_interval=0.2, ping_timeout=2) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(port, flush=True)
        await asyncio.sleep(60)


asyncio.run(main())
