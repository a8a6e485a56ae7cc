/* The PTY loop's hot path in C: read the child's output, write it to the user's terminal,
 * frame it for the recorder, and go on until something else needs the Python loop.
 *
 * Under a flood a PTY master gives at most 4 KB a read, so a 210 MB flood is ~51,000 reads.
 * In Python each costed ~6 us more than a bare read/write loop (selectors, framing, the
 * terminal writer's bookkeeping): the loop passed 0.80-0.85x of the bare loop's speed. Here
 * the copy runs without the GIL and returns to Python only for what Python decides: a key,
 * a signal, a message from the recorder, a full pipe to the recorder, the end of output.
 *
 * pump(master, stdout, outbox, may_write, wake, wake_writable, origin, coalesce, batch)
 *   master        the PTY master (non-blocking)
 *   stdout        the user's terminal, or -1 (not echoing)
 *   outbox        the pipe to the recorder (non-blocking)
 *   may_write     nothing of Python's waits for that pipe: frames may go out from here
 *   wake          fds whose readability ends the pump (signals, the recorder, the keys)
 *   wake_writable an fd whose writability ends the pump (the recorder's pipe when full), or -1
 *   origin        the session's start on the CLOCK_MONOTONIC clock (time.monotonic())
 *   coalesce      output read back to back (no wait between) within this many seconds of a
 *                 frame's first bytes joins that frame: under a flood, one frame a batch
 *                 rather than one a 4 KB read, which the recorder would join anyway
 *   batch         frames go out (or back to Python) once this many bytes wait
 * returns (why, frames, recent, stdout_ok)
 *   why           WAKE, FLUSH (frames to send and Python's must go first), BATCH, FULL
 *                 (the recorder's pipe took part: the rest is Python's), END (EOF or EIO),
 *                 or -errno when a read failed otherwise (the frames before it still come)
 *   frames        framed output not yet written to the recorder's pipe
 *   recent        the last <= 4096 bytes of output read, for the terminal writer's tail
 *   stdout_ok     False once writing to the terminal failed (it went away)
 * The frame layout is channel.HEADER's: kind 'o' | float64 seconds | uint32 length, little
 * endian, then the bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READ_SIZE 65536
#define HEADER_SIZE 13
#define RECENT 4096
#define MAX_WAKE 8

enum { WAKE = 0, FLUSH = 1, BATCH = 2, FULL = 3, END = 4 };

typedef struct {
    char *buf; /* frames waiting */
    size_t len, cap;
    int open;       /* the last frame may take more output (read back to back, within coalesce) */
    size_t open_at; /* where it starts in buf */
    double open_t;
    char recent[RECENT];
    size_t recent_len;
    int stdout_fd;
} state;

static double monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void put_le(char *at, const void *value, size_t size) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    const char *v = value;
    for (size_t i = 0; i < size; i++) at[i] = v[size - 1 - i];
#else
    memcpy(at, value, size);
#endif
}

/* Write all of data to the terminal; a full terminal is waited for a second at a time, as
 * the Python loop does. On an error the terminal is given up (recording goes on). */
static void echo(state *s, const char *data, size_t n) {
    while (n && s->stdout_fd >= 0) {
        ssize_t w = write(s->stdout_fd, data, n);
        if (w >= 0) {
            data += w;
            n -= (size_t)w;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd p = {.fd = s->stdout_fd, .events = POLLOUT};
            poll(&p, 1, 1000);
        } else if (errno != EINTR) {
            s->stdout_fd = -1;
        }
    }
}

static void remember(state *s, const char *data, size_t n) {
    if (n >= RECENT) {
        memcpy(s->recent, data + n - RECENT, RECENT);
        s->recent_len = RECENT;
        return;
    }
    size_t keep = s->recent_len + n > RECENT ? RECENT - n : s->recent_len;
    memmove(s->recent, s->recent + s->recent_len - keep, keep);
    memcpy(s->recent + keep, data, n);
    s->recent_len = keep + n;
}

/* Send the waiting frames to the recorder's pipe as far as it takes them. Returns 1 if all
 * went, 0 if the pipe is full (what is left stays at the start of the buffer). */
static int send_frames(state *s, int fd) {
    size_t done = 0;
    while (done < s->len) {
        ssize_t w = write(fd, s->buf + done, s->len - done);
        if (w > 0) {
            done += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else {
            break; /* full (EAGAIN) or broken: Python's outbox finds out which */
        }
    }
    memmove(s->buf, s->buf + done, s->len - done);
    s->len -= done;
    s->open = 0;
    return s->len == 0;
}

static int run(state *s, int master, int outbox, int may_write, const int *wake, int nwake,
               int wake_writable, double origin, double coalesce, size_t batch) {
    struct pollfd fds[MAX_WAKE + 2];
    for (;;) {
        if (s->cap - s->len < HEADER_SIZE + READ_SIZE) return BATCH;
        /* Read right after the open frame's bytes (to join it) or after room for a header. */
        char *data = s->buf + s->len + (s->open ? 0 : HEADER_SIZE);
        ssize_t n = read(master, data, READ_SIZE);
        if (n > 0) {
            double t = monotonic() - origin;
            echo(s, data, (size_t)n);
            remember(s, data, (size_t)n);
            if (s->open && t - s->open_t > coalesce) { /* too late to join: a frame of its own */
                memmove(data + HEADER_SIZE, data, (size_t)n);
                s->open = 0;
            }
            if (!s->open) {
                s->open = 1;
                s->open_at = s->len;
                s->open_t = t;
                s->buf[s->len] = 'o';
                put_le(s->buf + s->len + 1, &t, 8);
                s->len += HEADER_SIZE;
            }
            s->len += (size_t)n;
            uint32_t length = (uint32_t)(s->len - s->open_at - HEADER_SIZE);
            put_le(s->buf + s->open_at + 9, &length, 4);
            if (s->len >= batch) {
                if (!may_write) return BATCH;
                if (!send_frames(s, outbox)) return FULL;
            }
            continue;
        }
        if (n == 0 || errno == EIO) return END; /* every slave fd closed */
        if (errno == EINTR) return WAKE;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -errno;
        /* Nothing to read: before sleeping, the recorder gets what there is, at once (the
         * detector should see output as it comes, not a batch later). */
        if (s->len) {
            if (!may_write) return FLUSH;
            if (!send_frames(s, outbox)) return FULL;
        }
        s->open = 0; /* output that comes after a wait is an event of its own */
        int nfds = 0;
        fds[nfds++] = (struct pollfd){.fd = master, .events = POLLIN};
        for (int i = 0; i < nwake; i++) fds[nfds++] = (struct pollfd){.fd = wake[i], .events = POLLIN};
        if (wake_writable >= 0) fds[nfds++] = (struct pollfd){.fd = wake_writable, .events = POLLOUT};
        if (poll(fds, (nfds_t)nfds, -1) < 0) return WAKE; /* EINTR: a signal for Python */
        for (int i = 1; i < nfds; i++)
            if (fds[i].revents) return WAKE;
        /* Only the master is ready (data, or hang-up: the read says which). */
    }
}

static PyObject *pump(PyObject *self, PyObject *args) {
    int master, stdout_fd, outbox, may_write, wake_writable;
    PyObject *wake_seq;
    double origin, coalesce;
    Py_ssize_t batch;
    if (!PyArg_ParseTuple(args, "iiipOiddn:pump", &master, &stdout_fd, &outbox, &may_write, &wake_seq,
                          &wake_writable, &origin, &coalesce, &batch))
        return NULL;
    PyObject *items = PySequence_Fast(wake_seq, "wake must be a sequence of fds");
    if (!items) return NULL;
    Py_ssize_t nwake = PySequence_Fast_GET_SIZE(items);
    if (nwake > MAX_WAKE || batch <= 0) {
        Py_DECREF(items);
        PyErr_SetString(PyExc_ValueError, "at most 8 wake fds, and a positive batch");
        return NULL;
    }
    int wake[MAX_WAKE];
    for (Py_ssize_t i = 0; i < nwake; i++) {
        wake[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(items, i));
        if (wake[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(items);
            return NULL;
        }
    }
    Py_DECREF(items);

    state s = {.stdout_fd = stdout_fd};
    s.cap = (size_t)batch + HEADER_SIZE + READ_SIZE;
    s.buf = PyMem_RawMalloc(s.cap);
    if (!s.buf) return PyErr_NoMemory();
    int why;
    Py_BEGIN_ALLOW_THREADS
    why = run(&s, master, outbox, may_write, wake, (int)nwake, wake_writable, origin, coalesce, (size_t)batch);
    Py_END_ALLOW_THREADS
    PyObject *result = Py_BuildValue("iy#y#O", why, s.buf, (Py_ssize_t)s.len, s.recent, (Py_ssize_t)s.recent_len,
                                     s.stdout_fd >= 0 || stdout_fd < 0 ? Py_True : Py_False);
    PyMem_RawFree(s.buf);
    return result;
}

static PyMethodDef methods[] = {
    {"pump", pump, METH_VARARGS, "Copy the PTY's output to the terminal and frame it for the recorder, until Python is needed."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_copy", "The PTY loop's copy of the child's output, in C.", -1, methods};

PyMODINIT_FUNC PyInit__copy(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && (PyModule_AddIntConstant(m, "WAKE", WAKE) || PyModule_AddIntConstant(m, "FLUSH", FLUSH) ||
              PyModule_AddIntConstant(m, "BATCH", BATCH) || PyModule_AddIntConstant(m, "FULL", FULL) ||
              PyModule_AddIntConstant(m, "END", END))) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
