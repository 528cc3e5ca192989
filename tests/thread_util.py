"""Running one test body on several threads at once (thread-safety tests)."""
import threading


def run_threads(work, n=4, timeout=60):
    """work(i) for i in range(n), each on its own thread at once; raises the first error any raised, or an
    AssertionError naming a thread still running after `timeout` seconds."""
    errors = []

    def guarded(i):
        try:
            work(i)
        except BaseException as e:   # reported below, in the test's thread
            errors.append(e)
    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), f"a thread still runs after {timeout} s"
    if errors:
        raise errors[0]
