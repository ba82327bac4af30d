# Never finish loading: sleep at import, without using any CPU (so CPU limits
# never fire).
import time

time.sleep(10 ** 6)
