/*
 * libnvmf4j_spdk: SPDK's NVMe-oF target inside the service's JVM.
 *
 * start() runs spdk_app_start() on a thread of its own (it becomes SPDK's main reactor and app thread;
 * SPDK installs no signal handlers and opens no RPC socket). Every control call packs its arguments into
 * a struct call, sends it to the app thread with spdk_thread_send_msg() and waits for the app thread to
 * finish it, so SPDK's objects are only ever touched on the thread SPDK expects. Asynchronous SPDK steps
 * (subsystem start/stop/pause/resume, listener changes, transport creation, bdev deletion) chain their
 * callbacks on the app thread and finish the call from the last one. A failure comes back to Java as an
 * io.nvmf4j.spdk.SpdkException carrying the negated errno and a message that includes the error lines
 * SPDK logged while the call ran.
 *
 * A call that SPDK does not finish within the timeout given to start() throws ETIMEDOUT; its struct is
 * reference-counted, so the app thread may still finish it later without touching freed memory. A descriptor
 * handed to a call (a file bdev's) belongs to the struct and is closed when the last reference goes, so a call
 * that runs after its caller gave up still opens the file the caller meant, never a descriptor number reused
 * by another file meanwhile.
 *
 * A process that exits with SPDK running (System.exit, an uncaught OutOfMemoryError ending main) has SPDK
 * stopped by an exit handler (stop_at_exit) before the destructors unmap DPDK's memory under the reactors.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_* */
#include "spdk/stdinc.h"
#include "spdk/bdev.h"
#include "spdk/bdev_module.h"
#include "spdk/env.h"
#include "spdk/event.h"
#include "spdk/json.h"
#include "spdk/keyring.h"
#include "spdk/keyring_module.h"
#include "spdk/log.h"
#include "spdk/nvmf.h"
#include "spdk/nvmf_transport.h"
#include "spdk/string.h"
#include "spdk/thread.h"
#include "spdk/uuid.h"
#include "spdk/version.h"
#include "spdk/bit_array.h"

#include "bdev_malloc.h"
#include "bdev_null.h"
#include "bdev_aio.h"
#include "vbdev_lvol.h"
#include "nvmf/nvmf_internal.h"

#include <dirent.h>
#include <jni.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include "nvmf4j_jni.h"

/* Bumped whenever a native signature changes; must equal SpdkNative.ABI_VERSION. */
#define NVMF4J_SPDK_ABI_VERSION 9
#define NATIVE_CLASS "io/nvmf4j/spdk/SpdkNative"
#define EXCEPTION_CLASS "io/nvmf4j/spdk/SpdkException"

#define MSG_LEN 1024
#define STR_LEN 256

/* ------------------------------------------------------------------ SPDK's log, captured */

/* Error lines SPDK logged since the last errlog_reset(): appended to the message of a failed call. */
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_errlog[MSG_LEN];
static size_t g_errlog_len;
static int g_print_level = SPDK_LOG_NOTICE;

static void log_cb(int level, const char *file, const int line, const char *func, const char *format,
		   va_list args)
{
	char buf[512];
	va_list copy;
	va_copy(copy, args);
	int n = vsnprintf(buf, sizeof(buf), format, copy);
	va_end(copy);
	if (n < 0)
		return;
	size_t len = strnlen(buf, sizeof(buf));
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	if (level <= g_print_level)
		fprintf(stderr, "spdk: %s: %s\n", func ? func : "-", buf);
	if (level <= SPDK_LOG_ERROR) {
		pthread_mutex_lock(&g_log_lock);
		size_t room = sizeof(g_errlog) - g_errlog_len;
		if (room > 4) {
			int w = snprintf(g_errlog + g_errlog_len, room, "%s%s", g_errlog_len ? "; " : "", buf);
			if (w > 0)
				g_errlog_len += (size_t)w < room ? (size_t)w : room - 1;
		}
		pthread_mutex_unlock(&g_log_lock);
	}
}

static void errlog_reset(void)
{
	pthread_mutex_lock(&g_log_lock);
	g_errlog_len = 0;
	g_errlog[0] = '\0';
	pthread_mutex_unlock(&g_log_lock);
}

/* ------------------------------------------------------------------ the app and its state */

enum { ST_NONE, ST_STARTING, ST_RUNNING, ST_STOPPING, ST_STOPPED, ST_FAILED };

static atomic_int g_state = ST_NONE;
/*
 * Held for reading by a caller from its check that SPDK runs to its message's send (run_call, the app-thread
 * hold), and for writing by a stop as it leaves ST_RUNNING: a message is either sent before the stop begins (the app
 * thread then still exists) or refused, never sent to an app thread that the stop is tearing down.
 */
static pthread_rwlock_t g_send_lock = PTHREAD_RWLOCK_INITIALIZER;
/* Held while the app thread changes g_state; g_state_changed is broadcast after each change. */
static pthread_mutex_t g_state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_state_changed;
static pthread_t g_app_pthread;
static sem_t g_started;
static int g_start_rc;
static int g_app_rc;
static struct spdk_thread *g_app_thread;
static struct spdk_nvmf_tgt *g_tgt;
static int g_timeout_ms = 30000;

struct app_args {
	char name[64];
	char mask[64];
	int mem_size_mb;
	bool no_huge;
	bool core_locks;
	bool isolate;
	cpu_set_t allowed; /* the CPUs the process could use before SPDK pinned anything */
};
static struct app_args g_args;

/* The time on clock ms milliseconds from now, for the timed waits. */
static struct timespec deadline_after(clockid_t clock, int ms)
{
	struct timespec t;
	clock_gettime(clock, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/* Sets g_state from the app thread and wakes await_state_leaves(). */
static void set_state(int state)
{
	pthread_mutex_lock(&g_state_lock);
	atomic_store(&g_state, state);
	pthread_cond_broadcast(&g_state_changed);
	pthread_mutex_unlock(&g_state_lock);
}

/* Waits until g_state is no longer state, at most timeout_ms (negative: no limit); whether it left it. */
static bool await_state_leaves(int state, int timeout_ms)
{
	struct timespec deadline = deadline_after(CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&g_state_lock);
	int rc = 0;
	while (atomic_load(&g_state) == state && rc != ETIMEDOUT)
		rc = timeout_ms < 0 ? pthread_cond_wait(&g_state_changed, &g_state_lock)
		     : pthread_cond_timedwait(&g_state_changed, &g_state_lock, &deadline);
	bool left = atomic_load(&g_state) != state;
	pthread_mutex_unlock(&g_state_lock);
	return left;
}

struct call;
typedef void (*call_fn)(struct call *c);

/* One control call: arguments in, status and text result out. */
struct call {
	atomic_int refs;
	sem_t done;
	call_fn fn;
	int rc;
	char msg[MSG_LEN];
	char s1[STR_LEN], s2[STR_LEN], s3[STR_LEN], s4[STR_LEN], s5[STR_LEN];
	uint64_t u1;
	int i1, i2, i3, i4;
	bool b1;
	uint8_t nguid[16], eui64[8];
	bool has_nguid, has_eui64, has_uuid;
	struct spdk_uuid uuid;
	struct spdk_nvme_transport_id trid;
	struct spdk_nvmf_subsystem *subsystem;
	struct spdk_nvmf_transport_opts topts;
	int iopts[8];
	/* a descriptor the call owns (closed with the struct), -1 none */
	int fd;
	/* result text (heap), NULL when none */
	char *out;
	size_t out_len, out_cap;
	/* scratch for the statistics walks */
	struct spdk_bdev **bdevs;
	int nbdevs, bdev_at;
	struct spdk_bdev_io_stat *stat;
	uint64_t acc[8];
	/* the latency walk: the bdev's channels merged into hist, the channel being read */
	struct spdk_histogram_data *hist;
	struct spdk_bdev_channel_iter *iter;
};

static void call_put(struct call *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == 1) {
		if (c->fd >= 0)
			close(c->fd);
		sem_destroy(&c->done);
		free(c->out);
		free(c->bdevs);
		free(c->stat);
		spdk_histogram_data_free(c->hist);
		free(c);
	}
}

/* Ends a call on the app thread: status, message (printf-style, NULL for none), wakes the caller. */
static void finish(struct call *c, int rc, const char *fmt, ...)
{
	c->rc = rc;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
		va_end(ap);
	}
	sem_post(&c->done);
	call_put(c);
}

/* Ends a call keeping the message already in c->msg. */
static void finish_keep(struct call *c, int rc)
{
	c->rc = rc;
	sem_post(&c->done);
	call_put(c);
}

static void appendf(struct call *c, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		size_t room = c->out_cap - c->out_len;
		va_start(ap, fmt);
		int n = c->out ? vsnprintf(c->out + c->out_len, room, fmt, ap) : -1;
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			c->out_len += (size_t)n;
			return;
		}
		size_t cap = c->out_cap ? c->out_cap * 2 : 4096;
		while (n >= 0 && cap - c->out_len <= (size_t)n)
			cap *= 2;
		char *p = realloc(c->out, cap);
		if (!p)
			return;
		c->out = p;
		c->out_cap = cap;
		c->out[c->out_len] = '\0';
	}
}

static void throw_spdk(JNIEnv *env, int rc, const char *msg)
{
	jclass cls = (*env)->FindClass(env, EXCEPTION_CLASS);
	if (!cls)
		return;
	jmethodID ctor = (*env)->GetMethodID(env, cls, "<init>", "(ILjava/lang/String;)V");
	if (!ctor)
		return;
	jstring jmsg = (*env)->NewStringUTF(env, msg);
	if (!jmsg)
		return;
	jobject ex = (*env)->NewObject(env, cls, ctor, (jint)rc, jmsg);
	if (ex)
		(*env)->Throw(env, (jthrowable)ex);
}

static void call_on_app(void *arg)
{
	struct call *c = arg;
	c->fn(c);
}

static struct call *call_new(call_fn fn)
{
	struct call *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	atomic_init(&c->refs, 2);
	sem_init(&c->done, 0, 0);
	c->fd = -1;
	c->fn = fn;
	return c;
}

/*
 * Runs c on the app thread and waits. Returns 0 with c still owned by the caller (call_put when done
 * reading), or throws and returns -1 (c released).
 */
static int run_call(JNIEnv *env, struct call *c)
{
	pthread_rwlock_rdlock(&g_send_lock);
	if (atomic_load(&g_state) != ST_RUNNING) {
		pthread_rwlock_unlock(&g_send_lock);
		call_put(c);
		call_put(c);
		throw_spdk(env, -ENODEV, "SPDK is not running");
		return -1;
	}
	errlog_reset();
	int rc = spdk_thread_send_msg(g_app_thread, call_on_app, c);
	pthread_rwlock_unlock(&g_send_lock);
	if (rc != 0) {
		call_put(c);
		call_put(c);
		throw_spdk(env, rc, "SPDK's app thread refused the message (its queue is full)");
		return -1;
	}
	/* sem_timedwait measures against CLOCK_REALTIME */
	struct timespec ts = deadline_after(CLOCK_REALTIME, g_timeout_ms);
	while (sem_timedwait(&c->done, &ts) != 0) {
		if (errno == EINTR)
			continue;
		char msg[128];
		snprintf(msg, sizeof(msg), "SPDK did not finish the call within %d ms", g_timeout_ms);
		call_put(c);
		throw_spdk(env, -ETIMEDOUT, msg);
		return -1;
	}
	if (c->rc != 0) {
		char msg[MSG_LEN * 2 + 16];
		pthread_mutex_lock(&g_log_lock);
		if (g_errlog_len && !strstr(c->msg, g_errlog))
			snprintf(msg, sizeof(msg), "%s (SPDK: %s)", c->msg[0] ? c->msg : spdk_strerror(-c->rc), g_errlog);
		else
			snprintf(msg, sizeof(msg), "%s", c->msg[0] ? c->msg : spdk_strerror(-c->rc));
		pthread_mutex_unlock(&g_log_lock);
		int crc = c->rc;
		call_put(c);
		throw_spdk(env, crc, msg);
		return -1;
	}
	return 0;
}

/* Copies a Java string into a fixed buffer; false (with an exception pending) when null or too long. */
static bool jstr(JNIEnv *env, jstring s, char *buf, size_t len, const char *what)
{
	buf[0] = '\0';
	if (!s) {
		char msg[96];
		snprintf(msg, sizeof(msg), "%s: missing", what);
		throw_spdk(env, -EINVAL, msg);
		return false;
	}
	const char *p = (*env)->GetStringUTFChars(env, s, NULL);
	if (!p)
		return false;
	size_t n = strlen(p);
	bool ok = n < len;
	if (ok)
		memcpy(buf, p, n + 1);
	(*env)->ReleaseStringUTFChars(env, s, p);
	if (!ok) {
		char msg[96];
		snprintf(msg, sizeof(msg), "%s: longer than %zu characters", what, len - 1);
		throw_spdk(env, -EINVAL, msg);
	}
	return ok;
}

static jstring take_out(JNIEnv *env, struct call *c)
{
	jstring s = (*env)->NewStringUTF(env, c->out ? c->out : "");
	call_put(c);
	return s;
}

/*
 * Runs fn with string argument arg copied into s1 (what names it in errors; optional: a null arg stands for an empty
 * string) and returns its result text, or NULL with an exception pending.
 */
static jstring text_call(JNIEnv *env, call_fn fn, jstring arg, const char *what, bool optional)
{
	struct call *c = call_new(fn);
	if (!c)
		return NULL;
	if ((arg || !optional) && !jstr(env, arg, c->s1, sizeof(c->s1), what)) {
		call_put(c);
		call_put(c);
		return NULL;
	}
	if (run_call(env, c) != 0)
		return NULL;
	return take_out(env, c);
}

/*
 * Runs fn with n (at most 5) string arguments copied into s1..s5, what[i] naming each in errors; bit i of optional
 * lets a null args[i] stand for an empty string.
 */
static void strings_call(JNIEnv *env, call_fn fn, int n, const jstring *args, const char *const *what,
			 unsigned optional)
{
	struct call *c = call_new(fn);
	if (!c)
		return;
	char *slot[5] = {c->s1, c->s2, c->s3, c->s4, c->s5};
	for (int i = 0; i < n && i < 5; i++) {
		if (!args[i] && (optional & (1u << i)))
			continue; /* calloc left it empty */
		if (!jstr(env, args[i], slot[i], STR_LEN, what[i])) {
			call_put(c);
			call_put(c);
			return;
		}
	}
	if (run_call(env, c) == 0)
		call_put(c);
}

/* ------------------------------------------------------------------ start and stop */

/*
 * Keeps the JVM's own threads (GC, JIT, the API's event loops, everything but SPDK's reactors) off the
 * reactors' cores, so a busy-polling reactor never shares its core with them: threads that exist now get the
 * process's CPUs minus the reactor cores, and threads they create later inherit that. Reactor threads are
 * recognised by the name SPDK gives them (reactor_N). Nothing changes when no CPU would be left.
 */
/* Sets every thread of the process but SPDK's reactors (named reactor_N by SPDK) to CPUs; how many. */
static int set_jvm_threads_affinity(const cpu_set_t *cpus)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0;
	int moved = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char path[64], comm[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		if (strncmp(comm, "reactor_", 8) == 0)
			continue;
		if (sched_setaffinity((pid_t)atoi(e->d_name), sizeof(*cpus), cpus) == 0)
			moved++;
	}
	closedir(d);
	return moved;
}

static bool g_isolated;

/*
 * Keeps the JVM's own threads (GC, JIT, the API's event loops, everything but SPDK's reactors) off the
 * reactors' cores, so a busy-polling reactor never shares its core with them: threads that exist now get the
 * process's CPUs minus the reactor cores, and threads they create later inherit that (undone when SPDK
 * stops). Nothing changes when no CPU would be left.
 */
static void isolate_jvm_threads(void)
{
	const struct spdk_cpuset *reactors = spdk_app_get_core_mask();
	cpu_set_t others = g_args.allowed;
	for (uint32_t cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (spdk_cpuset_get_cpu(reactors, cpu))
			CPU_CLR(cpu, &others);
	}
	if (CPU_COUNT(&others) == 0) {
		SPDK_NOTICELOG("the reactors use every CPU of this process: the JVM's threads share their cores\n");
		return;
	}
	int moved = set_jvm_threads_affinity(&others);
	g_isolated = true;
	SPDK_NOTICELOG("kept %d JVM threads off the reactor cores (they run on the other %d CPU(s))\n", moved,
		       CPU_COUNT(&others));
}

static void app_started(void *arg)
{
	(void)arg;
	if (g_args.isolate)
		isolate_jvm_threads();
	g_app_thread = spdk_get_thread();
	g_tgt = spdk_nvmf_get_first_tgt();
	if (!g_tgt) {
		g_start_rc = -ENODEV;
		SPDK_ERRLOG("the nvmf subsystem created no target\n");
		spdk_app_stop(-ENODEV);
		sem_post(&g_started);
		return;
	}
	g_start_rc = 0;
	set_state(ST_RUNNING);
	sem_post(&g_started);
}

static void *app_main(void *arg)
{
	(void)arg;
	struct spdk_app_opts opts;
	spdk_app_opts_init(&opts, sizeof(opts));
	opts.name = g_args.name;
	opts.reactor_mask = g_args.mask;
	opts.mem_size = g_args.mem_size_mb;
	opts.no_huge = g_args.no_huge;
	opts.no_pci = true;
	opts.rpc_addr = NULL;           /* no JSON-RPC socket: every call comes through this library */
	opts.disable_signal_handlers = true; /* the JVM owns SIGTERM/SIGINT; close() stops SPDK */
	opts.shm_id = -1;
	opts.disable_cpumask_locks = !g_args.core_locks;
	/* one process, no secondaries: no hugepage files left behind by a crash (DPDK refuses it with --no-huge) */
	opts.unlink_hugepage = !g_args.no_huge;
	opts.log = log_cb;
	opts.print_level = SPDK_LOG_NOTICE;
	g_start_rc = -EIO;
	g_app_rc = spdk_app_start(&opts, app_started, NULL);
	if (atomic_load(&g_state) != ST_RUNNING && atomic_load(&g_state) != ST_STOPPING) {
		/* never got to app_started: the environment or a subsystem failed to come up */
		if (g_start_rc == 0 || g_start_rc == -EIO)
			g_start_rc = g_app_rc ? (g_app_rc < 0 ? g_app_rc : -g_app_rc) : -EIO;
		spdk_app_fini();
		set_state(ST_FAILED);
		sem_post(&g_started);
		return NULL;
	}
	spdk_app_fini();
	if (g_isolated)
		set_jvm_threads_affinity(&g_args.allowed);
	set_state(ST_STOPPED);
	return NULL;
}

static void JNICALL n_start(JNIEnv *env, jclass cls, jstring name, jstring mask, jint mem_size_mb,
			     jboolean no_huge, jboolean core_locks, jboolean isolate, jint timeout_ms)
{
	(void)cls;
	int expected = ST_NONE;
	if (!atomic_compare_exchange_strong(&g_state, &expected, ST_STARTING)) {
		throw_spdk(env, -EALREADY, expected == ST_RUNNING ? "SPDK is already running in this process"
			   : "SPDK was already started once in this process; DPDK cannot initialise twice, "
			   "so start a new process");
		return;
	}
	if (!jstr(env, name, g_args.name, sizeof(g_args.name), "name") ||
	    !jstr(env, mask, g_args.mask, sizeof(g_args.mask), "coreMask")) {
		atomic_store(&g_state, ST_FAILED);
		return;
	}
	g_args.mem_size_mb = mem_size_mb;
	g_args.no_huge = no_huge;
	g_args.core_locks = core_locks;
	g_args.isolate = isolate;
	if (sched_getaffinity(0, sizeof(g_args.allowed), &g_args.allowed) != 0)
		g_args.isolate = false;
	g_timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
	sem_init(&g_started, 0, 0);
	errlog_reset();
	int rc = pthread_create(&g_app_pthread, NULL, app_main, NULL);
	if (rc != 0) {
		atomic_store(&g_state, ST_FAILED);
		throw_spdk(env, -rc, "could not create SPDK's main thread");
		return;
	}
	while (sem_wait(&g_started) != 0 && errno == EINTR) {
	}
	if (atomic_load(&g_state) != ST_RUNNING) {
		pthread_join(g_app_pthread, NULL);
		char msg[MSG_LEN + 128];
		pthread_mutex_lock(&g_log_lock);
		/* spdk_app_start's status is often a bare -1: then SPDK's logged errors say more than errno */
		if (g_start_rc == -1 && g_errlog_len)
			snprintf(msg, sizeof(msg), "SPDK did not start: %s", g_errlog);
		else if (g_start_rc == -1)
			snprintf(msg, sizeof(msg), "SPDK did not start (its environment failed to initialise: "
				 "DPDK's reason is on standard error, lines starting with EAL)");
		else
			snprintf(msg, sizeof(msg), "SPDK did not start (%s)%s%s", spdk_strerror(-g_start_rc),
				 g_errlog_len ? ": " : "", g_errlog);
		pthread_mutex_unlock(&g_log_lock);
		throw_spdk(env, g_start_rc, msg);
	}
}

static void do_shutdown(void *arg)
{
	(void)arg;
	spdk_app_start_shutdown();
}

static jint JNICALL n_stop(JNIEnv *env, jclass cls)
{
	(void)cls;
	int expected = ST_RUNNING;
	pthread_rwlock_wrlock(&g_send_lock);
	bool stopping = atomic_compare_exchange_strong(&g_state, &expected, ST_STOPPING);
	pthread_rwlock_unlock(&g_send_lock);
	if (!stopping)
		return 0;
	int rc = spdk_thread_send_msg(g_app_thread, do_shutdown, NULL);
	if (rc != 0) {
		throw_spdk(env, rc, "could not ask SPDK to shut down");
		return rc;
	}
	await_state_leaves(ST_STOPPING, -1);
	pthread_join(g_app_pthread, NULL);
	return g_app_rc;
}

/*
 * Runs at the process's exit (exit(): System.exit, Runtime.halt, the end of main, and
 * -XX:+ExitOnOutOfMemoryError, which runs no Java shutdown hook) before the shared libraries' destructors, and
 * stops SPDK if it still runs.
 * One of those destructors is SPDK's env library's dpdk_cleanup(): rte_eal_cleanup() unmaps DPDK's memory
 * (from 0x200000000000), where the reactors' rings, message pools and pollers live, so a reactor still
 * polling then faults. A start in progress is waited for, then stopped. When SPDK does not stop within the
 * call timeout, the process ends here with _exit(EXIT_FAILURE), before the destructors can unmap anything.
 */
static void stop_at_exit(void)
{
	int state = atomic_load(&g_state);
	if (state == ST_NONE || state == ST_STOPPED || state == ST_FAILED)
		return;
	if (pthread_equal(pthread_self(), g_app_pthread))
		return; /* SPDK's own thread exiting the process: it cannot wait for itself */
	bool stopped = await_state_leaves(ST_STARTING, g_timeout_ms);
	int expected = ST_RUNNING;
	bool stopping = false;
	if (stopped) {
		pthread_rwlock_wrlock(&g_send_lock);
		stopping = atomic_compare_exchange_strong(&g_state, &expected, ST_STOPPING);
		pthread_rwlock_unlock(&g_send_lock);
	}
	if (stopping) {
		fprintf(stderr, "nvmf4j_spdk: the process is exiting with SPDK running: stopping SPDK first\n");
		stopped = spdk_thread_send_msg(g_app_thread, do_shutdown, NULL) == 0 &&
			  await_state_leaves(ST_STOPPING, g_timeout_ms);
		if (stopped) {
			pthread_join(g_app_pthread, NULL);
			fprintf(stderr, "nvmf4j_spdk: SPDK stopped (exit status %d)\n", g_app_rc);
		}
	} else if (stopped) {
		/* stopping already (close() on another thread) or never started */
		stopped = await_state_leaves(ST_STOPPING, g_timeout_ms);
	}
	if (!stopped) {
		fprintf(stderr, "nvmf4j_spdk: SPDK did not stop within %d ms of the process's exit: ending the "
			"process now, before its memory is unmapped under SPDK's threads\n", g_timeout_ms);
		fflush(stderr);
		_exit(EXIT_FAILURE);
	}
}

static jboolean JNICALL n_running(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	return atomic_load(&g_state) == ST_RUNNING;
}

/* ------------------------------------------------------------------ transports */

static void transport_added(void *arg, int status)
{
	struct call *c = arg;
	if (status)
		finish(c, status, "transport %s could not be added to the target", c->s1);
	else
		finish(c, 0, NULL);
}

static void transport_created(void *arg, struct spdk_nvmf_transport *t)
{
	struct call *c = arg;
	if (!t) {
		finish(c, -EINVAL, "SPDK could not create the %s transport%s", c->s1,
		       strcmp(c->s1, "RDMA") == 0 ? " (no RDMA device?)" : "");
		return;
	}
	spdk_nvmf_tgt_add_transport(g_tgt, t, transport_added, c);
}

static void do_create_transport(struct call *c)
{
	if (spdk_nvmf_tgt_get_transport(g_tgt, c->s1)) {
		finish(c, 0, NULL);
		return;
	}
	struct spdk_nvmf_transport_opts *o = &c->topts;
	if (!spdk_nvmf_transport_opts_init(c->s1, o, sizeof(*o))) {
		finish(c, -ENOTSUP, "SPDK has no %s transport in this build", c->s1);
		return;
	}
	if (c->iopts[0] > 0)
		o->max_queue_depth = (uint16_t)c->iopts[0];
	if (c->iopts[1] > 0)
		o->max_qpairs_per_ctrlr = (uint16_t)(c->iopts[1] + 1);
	if (c->iopts[2] >= 0)
		o->in_capsule_data_size = (uint32_t)c->iopts[2];
	if (c->iopts[3] > 0)
		o->max_io_size = (uint32_t)c->iopts[3];
	if (c->iopts[4] > 0)
		o->io_unit_size = (uint32_t)c->iopts[4];
	if (c->iopts[5] > 0)
		o->num_shared_buffers = (uint32_t)c->iopts[5];
	if (c->iopts[6] >= 0)
		o->buf_cache_size = (uint32_t)c->iopts[6];
	int rc = spdk_nvmf_transport_create_async(c->s1, o, transport_created, c);
	if (rc)
		finish(c, rc, "SPDK could not create the %s transport", c->s1);
}

/* opts: maxQueueDepth, maxIoQueues, inCapsuleDataSize, maxIoSize, ioUnitSize, numSharedBuffers, bufCacheSize */
static void JNICALL n_create_transport(JNIEnv *env, jclass cls, jstring type, jintArray opts)
{
	(void)cls;
	struct call *c = call_new(do_create_transport);
	if (!c || !jstr(env, type, c->s1, sizeof(c->s1), "transport")) {
		if (c) {
			call_put(c);
			call_put(c);
		}
		return;
	}
	for (int i = 0; i < 8; i++)
		c->iopts[i] = -1;
	jsize n = opts ? (*env)->GetArrayLength(env, opts) : 0;
	if (n > 8)
		n = 8;
	if (n)
		(*env)->GetIntArrayRegion(env, opts, 0, n, c->iopts);
	if (run_call(env, c) == 0)
		call_put(c);
}

/* ------------------------------------------------------------------ bdevs */

static void do_create_bdev(struct call *c)
{
	struct spdk_bdev *bdev = NULL;
	int rc;
	if (spdk_bdev_get_by_name(c->s2)) {
		finish(c, -EEXIST, "SPDK already has a bdev %s", c->s2);
		return;
	}
	if (strcmp(c->s1, "malloc") == 0) {
		struct malloc_bdev_opts o;
		memset(&o, 0, sizeof(o));
		o.name = c->s2;
		o.num_blocks = c->u1;
		o.block_size = (uint32_t)c->i1;
		o.numa_id = SPDK_ENV_NUMA_ID_ANY;
		if (c->has_uuid)
			spdk_uuid_copy(&o.uuid, &c->uuid);
		rc = create_malloc_disk(&bdev, &o);
	} else if (strcmp(c->s1, "null") == 0) {
		struct null_bdev_opts o;
		memset(&o, 0, sizeof(o));
		o.name = c->s2;
		o.num_blocks = c->u1;
		o.block_size = (uint32_t)c->i1;
		if (c->has_uuid)
			spdk_uuid_copy(&o.uuid, &c->uuid);
		rc = bdev_null_create(&bdev, &o);
	} else if (strcmp(c->s1, "file") == 0) {
		rc = create_aio_bdev(c->s2, c->s3, (uint32_t)c->i1, false, false, c->has_uuid ? &c->uuid : NULL, false);
	} else {
		rc = -EINVAL;
		finish(c, rc, "the spdk engine has no bdev type %s", c->s1);
		return;
	}
	if (rc)
		finish(c, rc, "SPDK refused bdev %s (%s): %s", c->s2, c->s1, spdk_strerror(-rc));
	else
		finish(c, 0, NULL);
}

/*
 * A file bdev is SPDK's aio bdev on /proc/self/fd/<fd>, which reopens the very file fd names. The call owns fd
 * from here on, whatever happens: it is closed with the call's struct, after the app thread ran (or dropped)
 * the call, even when the caller stopped waiting for it.
 */
static void JNICALL n_create_bdev(JNIEnv *env, jclass cls, jstring type, jstring name, jlong num_blocks,
				  jint block_size, jint fd, jstring uuid)
{
	(void)cls;
	struct call *c = call_new(do_create_bdev);
	if (!c) {
		if (fd >= 0)
			close(fd);
		throw_spdk(env, -ENOMEM, "out of memory");
		return;
	}
	c->fd = fd;
	if (fd >= 0)
		snprintf(c->s3, sizeof(c->s3), "/proc/self/fd/%d", (int)fd);
	if (!jstr(env, type, c->s1, sizeof(c->s1), "type") || !jstr(env, name, c->s2, sizeof(c->s2), "name") ||
	    (uuid && !jstr(env, uuid, c->s4, sizeof(c->s4), "uuid"))) {
		call_put(c);
		call_put(c);
		return;
	}
	if (strcmp(c->s1, "file") == 0 && fd < 0) {
		call_put(c);
		call_put(c);
		throw_spdk(env, -EBADF, "a file bdev needs the file's descriptor");
		return;
	}
	if (uuid) {
		if (spdk_uuid_parse(&c->uuid, c->s4) != 0) {
			call_put(c);
			call_put(c);
			throw_spdk(env, -EINVAL, "uuid: not a UUID");
			return;
		}
		c->has_uuid = true;
	}
	c->u1 = (uint64_t)num_blocks;
	c->i1 = block_size;
	if (run_call(env, c) == 0)
		call_put(c);
}

static void bdev_deleted(void *arg, int bdeverrno)
{
	struct call *c = arg;
	if (bdeverrno)
		finish(c, bdeverrno, "SPDK could not delete bdev %s: %s", c->s2, spdk_strerror(-bdeverrno));
	else
		finish(c, 0, NULL);
}

static void do_delete_bdev(struct call *c)
{
	if (!spdk_bdev_get_by_name(c->s2)) {
		finish(c, -ENOENT, "SPDK has no bdev %s", c->s2);
		return;
	}
	if (strcmp(c->s1, "malloc") == 0)
		delete_malloc_disk(c->s2, bdev_deleted, c);
	else if (strcmp(c->s1, "null") == 0)
		bdev_null_delete(c->s2, bdev_deleted, c);
	else if (strcmp(c->s1, "file") == 0)
		bdev_aio_delete(c->s2, bdev_deleted, c);
	else
		finish(c, -EINVAL, "the spdk engine has no bdev type %s", c->s1);
}

static void do_resize_bdev(struct call *c)
{
	int rc;
	if (strcmp(c->s1, "null") == 0) {
		struct spdk_bdev *b = spdk_bdev_get_by_name(c->s2);
		if (!b) {
			finish(c, -ENOENT, "SPDK has no bdev %s", c->s2);
			return;
		}
		uint64_t bytes = c->u1 * spdk_bdev_get_block_size(b);
		if (bytes % (1024 * 1024)) {
			finish(c, -EINVAL, "SPDK resizes null bdevs in whole MiB; %" PRIu64 " blocks is not", c->u1);
			return;
		}
		rc = bdev_null_resize(c->s2, bytes / (1024 * 1024));
	} else if (strcmp(c->s1, "file") == 0) {
		rc = bdev_aio_rescan(c->s2);
	} else {
		finish(c, -ENOTSUP, "SPDK cannot grow a %s bdev", c->s1);
		return;
	}
	if (rc)
		finish(c, rc, "SPDK could not grow bdev %s: %s", c->s2, spdk_strerror(-rc));
	else
		finish(c, 0, NULL);
}

/*
 * A bdev's QoS: c->acc[0..3] are its limits in SPDK's order (spdk_bdev_qos_rate_limit_type): read+write IOPS,
 * read+write MB/s, read MB/s, write MB/s; 0 disables one. The Java side refuses values SPDK would round
 * (IOPS not a multiple of 1000), so SPDK takes them as given. One change runs at a time (calls are serial), so
 * SPDK's -EAGAIN for a change in progress does not arise.
 */
static void bdev_qos_done(void *arg, int status)
{
	struct call *c = arg;
	if (status)
		finish(c, status, "SPDK could not set the QoS of bdev %s: %s", c->s1, spdk_strerror(-status));
	else
		finish(c, 0, NULL);
}

static void do_bdev_qos(struct call *c)
{
	struct spdk_bdev *b = spdk_bdev_get_by_name(c->s1);
	if (!b) {
		finish(c, -ENOENT, "SPDK has no bdev %s", c->s1);
		return;
	}
	uint64_t limits[SPDK_BDEV_QOS_NUM_RATE_LIMIT_TYPES];
	for (int i = 0; i < SPDK_BDEV_QOS_NUM_RATE_LIMIT_TYPES; i++)
		limits[i] = c->acc[i];
	spdk_bdev_set_qos_rate_limits(b, limits, bdev_qos_done, c);
}

static void JNICALL n_bdev_qos(JNIEnv *env, jclass cls, jstring name, jlong iops, jlong rw_mbps, jlong r_mbps,
			       jlong w_mbps)
{
	(void)cls;
	struct call *c = call_new(do_bdev_qos);
	if (!c)
		return;
	if (!jstr(env, name, c->s1, sizeof(c->s1), "bdev")) {
		call_put(c);
		call_put(c);
		return;
	}
	c->acc[SPDK_BDEV_QOS_RW_IOPS_RATE_LIMIT] = (uint64_t)iops;
	c->acc[SPDK_BDEV_QOS_RW_BPS_RATE_LIMIT] = (uint64_t)rw_mbps;
	c->acc[SPDK_BDEV_QOS_R_BPS_RATE_LIMIT] = (uint64_t)r_mbps;
	c->acc[SPDK_BDEV_QOS_W_BPS_RATE_LIMIT] = (uint64_t)w_mbps;
	if (run_call(env, c) == 0)
		call_put(c);
}

static void bdev_call(JNIEnv *env, call_fn fn, jstring type, jstring name, jlong num_blocks)
{
	struct call *c = call_new(fn);
	if (!c)
		return;
	if (!jstr(env, type, c->s1, sizeof(c->s1), "type") || !jstr(env, name, c->s2, sizeof(c->s2), "name")) {
		call_put(c);
		call_put(c);
		return;
	}
	c->u1 = (uint64_t)num_blocks;
	if (run_call(env, c) == 0)
		call_put(c);
}

static void JNICALL n_delete_bdev(JNIEnv *env, jclass cls, jstring type, jstring name)
{
	(void)cls;
	bdev_call(env, do_delete_bdev, type, name, 0);
}

static void JNICALL n_resize_bdev(JNIEnv *env, jclass cls, jstring type, jstring name, jlong num_blocks)
{
	(void)cls;
	bdev_call(env, do_resize_bdev, type, name, num_blocks);
}

/* ------------------------------------------------------------------ key files */

/*
 * nvmf4j's keyring module: a key names a file (DH-HMAC-CHAP's DHHC-1, a TLS PSK's NVMeTLSkey-1), read again each
 * time SPDK asks for the key: its DH-HMAC-CHAP code at every authentication (so a replaced file applies to the
 * next one), its TCP transport when a host is added. The file must be what the java engine's KeyFiles accepts:
 * no symbolic link (O_NOFOLLOW), a regular file owned by this process's user or root, no permission for group or
 * others. White space around the key is dropped: nvme gen-dhchap-key and gen-tls-key end their line with a
 * newline, which SPDK's own keyring_file would pass on and SPDK's PSK parser refuses. Key material is never
 * logged; it is wiped from the buffers here once copied out.
 */
struct key_file {
	char path[PATH_MAX];
};

static struct spdk_keyring_module g_key_files;

/* Opens a key file after the checks above; the descriptor, or a negative errno (logged without the key). */
static int key_file_open(const char *name, const char *path)
{
	/* O_NONBLOCK: a FIFO put where the file was must not stall the reactor that asks (regular files ignore it) */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		SPDK_ERRLOG("key %s: cannot open %s: %s\n", name, path, spdk_strerror(e));
		return -e;
	}
	struct stat st;
	const char *problem = NULL;
	if (fstat(fd, &st) != 0)
		problem = "cannot be examined (fstat failed)";
	else if (!S_ISREG(st.st_mode))
		problem = "is not a regular file";
	else if (st.st_mode & 077)
		problem = "is readable or writable by group or others (mode 0600 or 0400 needed)";
	else if (st.st_uid != getuid() && st.st_uid != 0)
		problem = "is owned by another user (not this process's user or root)";
	if (problem) {
		close(fd);
		SPDK_ERRLOG("key %s: %s %s\n", name, path, problem);
		return -EPERM;
	}
	return fd;
}

static int key_file_add(struct spdk_key *key, void *ctx)
{
	struct key_file *k = spdk_key_get_ctx(key);
	const char *path = ctx;
	if (strlen(path) >= sizeof(k->path))
		return -ENAMETOOLONG;
	int fd = key_file_open(spdk_key_get_name(key), path);
	if (fd < 0)
		return fd;
	close(fd);
	snprintf(k->path, sizeof(k->path), "%s", path);
	return 0;
}

static void key_file_remove(struct spdk_key *key)
{
	(void)key;
}

static int key_file_get(struct spdk_key *key, void *buf, int len)
{
	struct key_file *k = spdk_key_get_ctx(key);
	const char *name = spdk_key_get_name(key);
	int fd = key_file_open(name, k->path);
	if (fd < 0)
		return fd;
	char text[4096];
	size_t n = 0;
	int rc = 0;
	while (n < sizeof(text)) {
		ssize_t r = read(fd, text + n, sizeof(text) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	size_t from = 0, to = n;
	while (from < to && isspace((unsigned char)text[from]))
		from++;
	while (to > from && isspace((unsigned char)text[to - 1]))
		to--;
	if (rc == 0 && n == sizeof(text))
		rc = -EFBIG;
	else if (rc == 0 && to - from > (size_t)len)
		rc = -ENOBUFS;
	if (rc == 0) {
		memcpy(buf, text + from, to - from);
		rc = (int)(to - from);
	} else {
		SPDK_ERRLOG("key %s: cannot read %s: %s\n", name, k->path, spdk_strerror(-rc));
	}
	spdk_memset_s(text, sizeof(text), 0, sizeof(text));
	return rc;
}

static size_t key_file_ctx_size(void)
{
	return sizeof(struct key_file);
}

static struct spdk_keyring_module g_key_files = {
	.name = "nvmf4j_key_files",
	.add_key = key_file_add,
	.remove_key = key_file_remove,
	.get_key = key_file_get,
	.get_ctx_size = key_file_ctx_size,
};

SPDK_KEYRING_REGISTER_MODULE(nvmf4j_key_files, &g_key_files);

static void do_add_key(struct call *c)
{
	struct spdk_key_opts o;
	memset(&o, 0, sizeof(o));
	o.size = SPDK_SIZEOF(&o, ctx);
	o.name = c->s1;
	o.module = &g_key_files;
	o.ctx = c->s2;
	int rc = spdk_keyring_add_key(&o);
	finish(c, rc, rc ? "SPDK's keyring refused key %s (file %s)" : NULL, c->s1, c->s2);
}

static void do_remove_key(struct call *c)
{
	int rc = spdk_keyring_remove_key(c->s1, &g_key_files);
	finish(c, rc, rc ? "SPDK's keyring could not remove key %s" : NULL, c->s1);
}

static void JNICALL n_add_key(JNIEnv *env, jclass cls, jstring name, jstring path)
{
	(void)cls;
	strings_call(env, do_add_key, 2, (jstring[]){name, path}, (const char *const[]){"key name", "key file"}, 0);
}

static void JNICALL n_remove_key(JNIEnv *env, jclass cls, jstring name)
{
	(void)cls;
	strings_call(env, do_remove_key, 1, (jstring[]){name}, (const char *const[]){"key name"}, 0);
}

/* ------------------------------------------------------------------ subsystems */

static struct spdk_nvmf_subsystem *find_subsystem(struct call *c)
{
	struct spdk_nvmf_subsystem *s = spdk_nvmf_tgt_find_subsystem(g_tgt, c->s1);
	if (!s)
		finish(c, -ENOENT, "SPDK has no subsystem %s", c->s1);
	return s;
}

static void subsystem_started(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	struct call *c = arg;
	if (status) {
		spdk_nvmf_subsystem_destroy(s, NULL, NULL);
		finish(c, status, "SPDK could not start subsystem %s", c->s1);
		return;
	}
	finish(c, 0, NULL);
}

static void do_create_subsystem(struct call *c)
{
	if (spdk_nvmf_tgt_find_subsystem(g_tgt, c->s1)) {
		finish(c, -EEXIST, "SPDK already has a subsystem %s", c->s1);
		return;
	}
	struct spdk_nvmf_subsystem *s = spdk_nvmf_subsystem_create(g_tgt, c->s1, SPDK_NVMF_SUBTYPE_NVME,
					(uint32_t)c->i1);
	if (!s) {
		finish(c, -EINVAL, "SPDK refused subsystem %s", c->s1);
		return;
	}
	int rc = 0;
	const char *what = NULL;
	if ((rc = spdk_nvmf_subsystem_set_sn(s, c->s2)) != 0)
		what = "serial";
	else if ((rc = spdk_nvmf_subsystem_set_mn(s, c->s3)) != 0)
		what = "model";
	else if ((rc = spdk_nvmf_subsystem_set_allow_any_host(s, c->b1)) != 0)
		what = "allowAnyHost";
	else if ((rc = spdk_nvmf_subsystem_set_cntlid_range(s, (uint16_t)c->i2, (uint16_t)c->i3)) != 0)
		what = "cntlid range";
	/* every subsystem reports ANA, as the java engine's do: each listener a path with its groups' states */
	else if ((rc = spdk_nvmf_subsystem_set_ana_reporting(s, true)) != 0)
		what = "ANA reporting";
	if (rc) {
		spdk_nvmf_subsystem_destroy(s, NULL, NULL);
		finish(c, rc, "SPDK refused the %s of subsystem %s", what, c->s1);
		return;
	}
	rc = spdk_nvmf_subsystem_start(s, subsystem_started, c);
	if (rc) {
		spdk_nvmf_subsystem_destroy(s, NULL, NULL);
		finish(c, rc, "SPDK could not start subsystem %s", c->s1);
	}
}

static void JNICALL n_create_subsystem(JNIEnv *env, jclass cls, jstring nqn, jstring serial, jstring model,
				       jint max_namespaces, jint min_cntlid, jint max_cntlid, jboolean allow_any)
{
	(void)cls;
	struct call *c = call_new(do_create_subsystem);
	if (!c)
		return;
	if (!jstr(env, nqn, c->s1, sizeof(c->s1), "nqn") || !jstr(env, serial, c->s2, sizeof(c->s2), "serial") ||
	    !jstr(env, model, c->s3, sizeof(c->s3), "model")) {
		call_put(c);
		call_put(c);
		return;
	}
	c->i1 = max_namespaces;
	c->i2 = min_cntlid;
	c->i3 = max_cntlid;
	c->b1 = allow_any;
	if (run_call(env, c) == 0)
		call_put(c);
}

static void subsystem_destroyed(void *arg)
{
	finish(arg, 0, NULL);
}

/* Drops the transport-listener reference each of a stopped subsystem's listeners holds (destroy does not). */
static void release_listeners(struct spdk_nvmf_subsystem *s)
{
	for (struct spdk_nvmf_subsystem_listener *l = spdk_nvmf_subsystem_get_first_listener(s); l;
	     l = spdk_nvmf_subsystem_get_next_listener(s, l)) {
		const struct spdk_nvme_transport_id *trid = spdk_nvmf_subsystem_listener_get_trid(l);
		struct spdk_nvmf_transport *t = trid ? spdk_nvmf_tgt_get_transport(g_tgt, trid->trstring) : NULL;
		if (t)
			spdk_nvmf_transport_stop_listen(t, trid);
	}
}

static void subsystem_stopped(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	struct call *c = arg;
	if (status) {
		finish(c, status, "SPDK could not stop subsystem %s", c->s1);
		return;
	}
	release_listeners(s);
	int rc = spdk_nvmf_subsystem_destroy(s, subsystem_destroyed, c);
	if (rc == 0)
		finish(c, 0, NULL);
	else if (rc != -EINPROGRESS)
		finish(c, rc, "SPDK could not destroy subsystem %s", c->s1);
}

static void do_delete_subsystem(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	int rc = spdk_nvmf_subsystem_stop(s, subsystem_stopped, c);
	if (rc)
		finish(c, rc, "SPDK could not stop subsystem %s", c->s1);
}

/* one-string and two-string calls on a subsystem */
/* A call on subsystem nqn with up to one more string (arg, named what for its refusal) and two numbers. */
static void nqn_call2(JNIEnv *env, call_fn fn, jstring nqn, jstring arg, const char *what, jint i1, jint i2,
		      jboolean b1)
{
	struct call *c = call_new(fn);
	if (!c)
		return;
	if (!jstr(env, nqn, c->s1, sizeof(c->s1), "nqn") || (what && !jstr(env, arg, c->s2, sizeof(c->s2), what))) {
		call_put(c);
		call_put(c);
		return;
	}
	c->i1 = i1;
	c->i2 = i2;
	c->b1 = b1;
	if (run_call(env, c) == 0)
		call_put(c);
}

static void nqn_call(JNIEnv *env, call_fn fn, jstring nqn, jstring arg, const char *what, jint i1, jboolean b1)
{
	nqn_call2(env, fn, nqn, arg, what, i1, 0, b1);
}

static void JNICALL n_delete_subsystem(JNIEnv *env, jclass cls, jstring nqn)
{
	(void)cls;
	nqn_call(env, do_delete_subsystem, nqn, NULL, NULL, 0, false);
}

static void do_set_allow_any_host(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	int rc = spdk_nvmf_subsystem_set_allow_any_host(s, c->b1);
	finish(c, rc, rc ? "SPDK refused allowAnyHost on %s" : NULL, c->s1);
}

static void JNICALL n_set_allow_any_host(JNIEnv *env, jclass cls, jstring nqn, jboolean allow)
{
	(void)cls;
	nqn_call(env, do_set_allow_any_host, nqn, NULL, NULL, 0, allow);
}

/* A key of nvmf4j's keyring (see key files above), or NULL with the call finished when it is missing. */
static struct spdk_key *keyring_key(struct call *c, const char *name, const char *what)
{
	struct spdk_key *k = spdk_keyring_get_key(name);
	if (!k)
		finish(c, -ENOKEY, "SPDK's keyring has no %s key %s", what, name);
	return k;
}

/* The TCP transport's host parameters {"psk": name} (parsed in place in json); false when name is no plain name. */
struct psk_params {
	char json[STR_LEN + 16];
	struct spdk_json_val vals[4];
};

static bool psk_params(struct psk_params *p, const char *name)
{
	int n = snprintf(p->json, sizeof(p->json), "{\"psk\":\"%s\"}", name);
	return spdk_json_parse(p->json, (size_t)n, p->vals, SPDK_COUNTOF(p->vals), NULL,
			       SPDK_JSON_PARSE_FLAG_DECODE_IN_PLACE) == 4;
}

/*
 * Allows host s2 on subsystem s1 with keys named s3 (DH-HMAC-CHAP), s4 (controller key) and s5 (TLS PSK), each
 * empty for none, as SPDK's nvmf_subsystem_add_host RPC does: the DH-HMAC-CHAP keys in the host's options, the
 * PSK as the TCP transport's "psk" parameter (it reads the key now and derives the retained PSK).
 */
static void do_add_host(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	struct psk_params params;
	if (c->s5[0] && !psk_params(&params, c->s5)) {
		finish(c, -EINVAL, "PSK key name %s: not a plain name", c->s5);
		return;
	}
	struct spdk_key *key = NULL, *ckey = NULL;
	if ((c->s3[0] && !(key = keyring_key(c, c->s3, "DH-HMAC-CHAP"))) ||
	    (c->s4[0] && !(ckey = keyring_key(c, c->s4, "DH-HMAC-CHAP controller")))) {
		spdk_keyring_put_key(key);
		return;
	}
	struct spdk_nvmf_host_opts o;
	memset(&o, 0, sizeof(o));
	o.size = SPDK_SIZEOF(&o, dhchap_ctrlr_key);
	o.dhchap_key = key;
	o.dhchap_ctrlr_key = ckey;
	o.params = c->s5[0] ? params.vals : NULL;
	int rc = spdk_nvmf_subsystem_add_host_ext(s, c->s2, &o);
	spdk_keyring_put_key(ckey);
	spdk_keyring_put_key(key);
	finish(c, rc, rc ? "SPDK refused host %s on %s" : NULL, c->s2, c->s1);
}

/*
 * Makes SPDK's TCP transport read host s2's PSK (key s3) on subsystem s1 again: its entry (the retained PSK it
 * derived when the host was added) is dropped and made anew from the key file, as the add_host RPC makes it, on
 * the app thread where SPDK's own RPCs change that list. Connections already up keep their TLS session.
 */
static void do_reload_psk(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	struct spdk_nvmf_transport *t = spdk_nvmf_tgt_get_transport(g_tgt, "TCP");
	if (!t || !t->ops->subsystem_add_host || !t->ops->subsystem_remove_host) {
		finish(c, -ENOTSUP, "SPDK's TCP transport takes no PSKs here");
		return;
	}
	struct psk_params params;
	if (!psk_params(&params, c->s3)) {
		finish(c, -EINVAL, "PSK key name %s: not a plain name", c->s3);
		return;
	}
	t->ops->subsystem_remove_host(t, s, c->s2);
	int rc = t->ops->subsystem_add_host(t, s, c->s2, params.vals);
	finish(c, rc, rc ? "SPDK could not read the PSK of host %s on %s again (TLS refused for it until the file is "
	       "right)" : NULL, c->s2, c->s1);
}

static void JNICALL n_add_host(JNIEnv *env, jclass cls, jstring nqn, jstring hostnqn, jstring key, jstring ckey,
			       jstring psk)
{
	(void)cls;
	strings_call(env, do_add_host, 5, (jstring[]){nqn, hostnqn, key, ckey, psk},
		     (const char *const[]){"nqn", "hostnqn", "dhchapKey", "dhchapCtrlKey", "tlsKey"}, 0x1C);
}

static void JNICALL n_reload_psk(JNIEnv *env, jclass cls, jstring nqn, jstring hostnqn, jstring psk)
{
	(void)cls;
	strings_call(env, do_reload_psk, 3, (jstring[]){nqn, hostnqn, psk},
		     (const char *const[]){"nqn", "hostnqn", "tlsKey"}, 0);
}

static void host_disconnected(void *arg, int status)
{
	struct call *c = arg;
	finish(c, status, status ? "SPDK could not disconnect host %s from %s" : NULL, c->s2, c->s1);
}

static void do_remove_host(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	int rc = spdk_nvmf_subsystem_remove_host(s, c->s2);
	finish(c, rc, rc ? "SPDK could not remove host %s from %s" : NULL, c->s2, c->s1);
}

static void do_disconnect_host(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	int rc = spdk_nvmf_subsystem_disconnect_host(s, c->s2, host_disconnected, c, 0);
	if (rc)
		finish(c, rc, "SPDK could not disconnect host %s from %s", c->s2, c->s1);
}

static void JNICALL n_remove_host(JNIEnv *env, jclass cls, jstring nqn, jstring hostnqn)
{
	(void)cls;
	nqn_call(env, do_remove_host, nqn, hostnqn, "hostnqn", 0, false);
}

static void JNICALL n_disconnect_host(JNIEnv *env, jclass cls, jstring nqn, jstring hostnqn)
{
	(void)cls;
	nqn_call(env, do_disconnect_host, nqn, hostnqn, "hostnqn", 0, false);
}

/* ------------------------------------------------------------------ latency histograms */

/*
 * Each namespace's bdev keeps SPDK's latency histogram (spdk_bdev_histogram_enable_ext): every channel of the bdev
 * (one per poll group) tallies the ticks from the bdev I/O's submission to its completion, on the channel's own
 * thread, with no lock. SPDK keeps one histogram per bdev, with one io-type filter: it is enabled with none, so
 * reads, writes and the other commands are counted together. Granularity 3 over the whole 64-bit range: 8 buckets
 * per power of two (a bucket at most 12.5 % wide), 62 ranges (496 buckets), 3.9 KiB per channel (SPDK's default,
 * granularity 7, is 64 KiB per channel). A channel SPDK creates after the enable gets SPDK's default geometry; the
 * walk below re-buckets such a channel into the coarser one (a fine bucket lies inside one coarse bucket, so the
 * result equals tallying every value into the coarse geometry).
 */
#define HIST_GRANULARITY 3

static void hist_enabled(void *arg, int status)
{
	struct call *c = arg;
	if (status)
		SPDK_WARNLOG("namespace %d of %s: no latency histogram on bdev %s: %s\n", c->i4, c->s1, c->s2,
			     spdk_strerror(-status));
	finish_keep(c, 0);
}

/* Resumed after adding a namespace: its channels exist now, so the histogram is enabled with our geometry on each. */
static void ns_added_resumed(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	(void)s;
	struct call *c = arg;
	if (status) {
		finish(c, status, "SPDK could not resume subsystem %s", c->s1);
		return;
	}
	struct spdk_bdev *bdev = spdk_bdev_get_by_name(c->s2);
	if (!bdev) {
		finish_keep(c, 0);
		return;
	}
	struct spdk_bdev_enable_histogram_opts o;
	spdk_bdev_enable_histogram_opts_init(&o, sizeof(o));
	o.granularity = HIST_GRANULARITY;
	o.min_nsec = 0;
	o.max_nsec = UINT64_MAX;
	spdk_bdev_histogram_enable_ext(bdev, hist_enabled, c, true, &o);
}

/* Adds n data points of value v to h, as spdk_histogram_data_tally does for one. */
static void hist_add(struct spdk_histogram_data *h, uint64_t v, uint64_t n)
{
	uint32_t range = __spdk_histogram_data_get_bucket_range(h, v);
	uint32_t index;
	if (range < h->min_range) {
		range = h->min_range;
		index = 0;
	} else if (range > h->max_range) {
		range = h->max_range;
		index = SPDK_HISTOGRAM_NUM_BUCKETS_PER_RANGE(h) - 1;
	} else {
		index = __spdk_histogram_data_get_bucket_index(h, v, range);
	}
	*__spdk_histogram_get_bucket(h, range, index) += n;
}

static void hist_rebucket(void *ctx, uint64_t start, uint64_t end, uint64_t count, uint64_t total, uint64_t so_far)
{
	(void)end;
	(void)total;
	(void)so_far;
	if (count)
		hist_add(ctx, start, count);
}

static void hist_of_channel(void *arg, int status, struct spdk_histogram_data *h)
{
	struct call *c = arg;
	if (status == 0 && h) {
		if (spdk_histogram_data_merge(c->hist, h) != 0)
			spdk_histogram_data_iterate(h, hist_rebucket, c->hist);
	}
	spdk_bdev_for_each_channel_continue(c->iter, 0);
}

/* On the channel's thread, where its histogram is tallied. */
static void hist_channel(struct spdk_bdev_channel_iter *i, struct spdk_bdev *bdev, struct spdk_io_channel *ch,
			 void *ctx)
{
	(void)bdev;
	struct call *c = ctx;
	c->iter = i;
	spdk_bdev_channel_get_histogram(ch, hist_of_channel, c);
}

struct hist_line {
	struct call *c;
	double ns_per_tick;
};

static void hist_bucket_out(void *ctx, uint64_t start, uint64_t end, uint64_t count, uint64_t total, uint64_t so_far)
{
	(void)total;
	(void)so_far;
	struct hist_line *l = ctx;
	if (count)
		appendf(l->c, "\t%.0f,%.0f,%" PRIu64, (double)start * l->ns_per_tick, (double)end * l->ns_per_tick, count);
}

static void next_bdev_hist(struct call *c);

static void hist_line_out(struct call *c, const char *name)
{
	struct hist_line l = {c, 1e9 / (double)spdk_get_ticks_hz()};
	appendf(c, "%s", name);
	spdk_histogram_data_iterate(c->hist, hist_bucket_out, &l);
	appendf(c, "\n");
}

static void hist_walked(struct spdk_bdev *bdev, void *ctx, int status)
{
	struct call *c = ctx;
	if (status == 0 && c->s1[0]) {
		hist_line_out(c, c->s1);
	} else if (status == 0) {
		hist_line_out(c, spdk_bdev_get_name(bdev));
		const struct spdk_bdev_alias *a;
		TAILQ_FOREACH(a, spdk_bdev_get_aliases(bdev), tailq)
			hist_line_out(c, a->alias.name);
	}
	c->bdev_at++;
	next_bdev_hist(c);
}

static void next_bdev_hist(struct call *c)
{
	while (c->bdev_at < c->nbdevs && !c->bdevs[c->bdev_at]->internal.histogram_enabled)
		c->bdev_at++;
	if (c->bdev_at >= c->nbdevs) {
		finish(c, 0, NULL);
		return;
	}
	spdk_histogram_data_reset(c->hist);
	spdk_bdev_for_each_channel(c->bdevs[c->bdev_at], hist_channel, c, hist_walked);
}

/*
 * One line per bdev with a latency histogram and one more per alias of it (an lvol's <store>/<lvol>, which
 * namespaces name), or only bdev s1 when s1 is not empty (under that name, which may be an alias): the name, then
 * for each non-empty bucket "start,end,count" (start and end in nanoseconds); tab-separated. The counts are those
 * of the bdev's channels now: a namespace's since it was added.
 */
static void do_bdev_latency(struct call *c)
{
	int n = 0;
	if (c->s1[0]) {
		struct spdk_bdev *b = spdk_bdev_get_by_name(c->s1);
		if (!b) {
			finish(c, -ENODEV, "no bdev %s", c->s1);
			return;
		}
		c->bdevs = calloc(1, sizeof(*c->bdevs));
		if (c->bdevs)
			c->bdevs[c->nbdevs++] = b;
	} else {
		for (struct spdk_bdev *b = spdk_bdev_first(); b; b = spdk_bdev_next(b))
			n++;
		c->bdevs = calloc((size_t)n + 1, sizeof(*c->bdevs));
		for (struct spdk_bdev *b = spdk_bdev_first(); c->bdevs && b && c->nbdevs < n; b = spdk_bdev_next(b))
			c->bdevs[c->nbdevs++] = b;
	}
	c->hist = spdk_histogram_data_alloc_sized(HIST_GRANULARITY);
	if (!c->bdevs || !c->hist) {
		finish(c, -ENOMEM, "out of memory");
		return;
	}
	next_bdev_hist(c);
}

static jstring JNICALL n_bdev_latency(JNIEnv *env, jclass cls, jstring bdev)
{
	(void)cls;
	return text_call(env, do_bdev_latency, bdev, "bdev", true);
}

/* ------------------------------------------------------------------ namespaces */

static void resumed(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	(void)s;
	struct call *c = arg;
	if (status && c->rc == 0)
		finish(c, status, "SPDK could not resume subsystem %s", c->s1);
	else
		finish_keep(c, c->rc);
}

/* After the paused step: record rc/msg in c and resume; resumed() finishes with them. */
static void resume_with(struct spdk_nvmf_subsystem *s, struct call *c, int rc, const char *fmt, ...)
{
	c->rc = rc;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
		va_end(ap);
	}
	int r = spdk_nvmf_subsystem_resume(s, resumed, c);
	if (r) {
		if (rc == 0)
			finish(c, r, "SPDK could not resume subsystem %s", c->s1);
		else
			finish_keep(c, rc);
	}
}

static void ns_add_paused(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	struct call *c = arg;
	if (status) {
		finish(c, status, "SPDK could not pause subsystem %s", c->s1);
		return;
	}
	struct spdk_nvmf_ns_opts o;
	spdk_nvmf_ns_opts_get_defaults(&o, sizeof(o));
	o.nsid = (uint32_t)c->i1;
	if (c->has_nguid)
		memcpy(o.nguid, c->nguid, sizeof(o.nguid));
	if (c->has_eui64)
		memcpy(o.eui64, c->eui64, sizeof(o.eui64));
	if (c->has_uuid)
		spdk_uuid_copy(&o.uuid, &c->uuid);
	o.no_auto_visible = c->b1; /* masked: visible only to the hosts added with spdk_nvmf_ns_add_host */
	o.anagrpid = (uint32_t)c->i2; /* SPDK's default (0) would put it in the group numbered like its nsid */
	/* a PTPL file (s3): SPDK restores the reservation saved there and keeps it there while PTPL is on */
	uint32_t nsid = spdk_nvmf_subsystem_add_ns_ext(s, c->s2, &o, sizeof(o), c->s3[0] ? c->s3 : NULL);
	if (nsid == 0) {
		resume_with(s, c, -EINVAL, "SPDK refused namespace %d (bdev %s) in %s", c->i1, c->s2, c->s1);
		return;
	}
	c->i4 = (int)nsid;
	int r = spdk_nvmf_subsystem_resume(s, ns_added_resumed, c);
	if (r)
		finish(c, r, "SPDK could not resume subsystem %s", c->s1);
}

static void do_add_ns(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	int rc = spdk_nvmf_subsystem_pause(s, 0, ns_add_paused, c);
	if (rc)
		finish(c, rc, "SPDK could not pause subsystem %s", c->s1);
}

static bool jbytes(JNIEnv *env, jbyteArray a, uint8_t *out, jsize len, bool *has, const char *what)
{
	*has = false;
	if (!a)
		return true;
	if ((*env)->GetArrayLength(env, a) != len) {
		char msg[64];
		snprintf(msg, sizeof(msg), "%s: must be %d bytes", what, (int)len);
		throw_spdk(env, -EINVAL, msg);
		return false;
	}
	(*env)->GetByteArrayRegion(env, a, 0, len, (jbyte *)out);
	*has = true;
	return true;
}

static jint JNICALL n_add_namespace(JNIEnv *env, jclass cls, jstring nqn, jint nsid, jstring bdev,
				    jbyteArray nguid, jbyteArray uuid, jbyteArray eui64, jboolean masked, jint anagrpid,
				    jstring ptpl)
{
	(void)cls;
	struct call *c = call_new(do_add_ns);
	if (!c)
		return 0;
	bool has_uuid;
	if (!jstr(env, nqn, c->s1, sizeof(c->s1), "nqn") || !jstr(env, bdev, c->s2, sizeof(c->s2), "bdev") ||
	    (ptpl && !jstr(env, ptpl, c->s3, sizeof(c->s3), "ptplFile")) ||
	    !jbytes(env, nguid, c->nguid, 16, &c->has_nguid, "nguid") ||
	    !jbytes(env, uuid, c->uuid.u.raw, 16, &has_uuid, "uuid") ||
	    !jbytes(env, eui64, c->eui64, 8, &c->has_eui64, "eui64")) {
		call_put(c);
		call_put(c);
		return 0;
	}
	c->has_uuid = has_uuid;
	c->i1 = nsid;
	c->i2 = anagrpid;
	c->b1 = masked;
	if (run_call(env, c) != 0)
		return 0;
	jint out = c->i4;
	call_put(c);
	return out;
}

/*
 * Per-host masking: SPDK changes a namespace's visibility only while the subsystem is paused, and itself sends
 * the host's controllers the changed-namespace AEN (and log page 04h entry) when their view changes.
 */
static void ns_host_paused(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	struct call *c = arg;
	if (status) {
		finish(c, status, "SPDK could not pause subsystem %s", c->s1);
		return;
	}
	int rc = c->b1 ? spdk_nvmf_ns_add_host(s, (uint32_t)c->i1, c->s2, 0)
		       : spdk_nvmf_ns_remove_host(s, (uint32_t)c->i1, c->s2, 0);
	resume_with(s, c, rc, rc ? "SPDK could not change the visibility of namespace %d of %s to host %s" : NULL,
		    c->i1, c->s1, c->s2);
}

/* Pauses c's subsystem (with nsid: that namespace's I/O drained too), then goes on in paused; a refusal finishes c. */
static void pause_then(struct call *c, uint32_t nsid, spdk_nvmf_subsystem_state_change_done paused)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	int rc = spdk_nvmf_subsystem_pause(s, nsid, paused, c);
	if (rc)
		finish(c, rc, "SPDK could not pause subsystem %s", c->s1);
}

static void do_ns_host(struct call *c)
{
	pause_then(c, 0, ns_host_paused);
}

static void JNICALL n_namespace_host(JNIEnv *env, jclass cls, jstring nqn, jint nsid, jstring hostnqn,
				     jboolean visible)
{
	(void)cls;
	nqn_call(env, do_ns_host, nqn, hostnqn, "hostnqn", nsid, visible);
}

static void ns_remove_paused(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	struct call *c = arg;
	if (status) {
		finish(c, status, "SPDK could not pause subsystem %s", c->s1);
		return;
	}
	int rc = spdk_nvmf_subsystem_remove_ns(s, (uint32_t)c->i1);
	resume_with(s, c, rc, rc ? "SPDK could not remove namespace %d from %s" : NULL, c->i1, c->s1);
}

static void do_remove_ns(struct call *c)
{
	pause_then(c, (uint32_t)c->i1, ns_remove_paused);
}

static void JNICALL n_remove_namespace(JNIEnv *env, jclass cls, jstring nqn, jint nsid)
{
	(void)cls;
	nqn_call(env, do_remove_ns, nqn, NULL, NULL, nsid, false);
}

/*
 * A namespace's ANA group: SPDK moves it only while the subsystem is paused (spdk_nvmf_subsystem_set_ns_ana_group,
 * which refuses group 0 and groups above the subsystem's max_nsid); at the resume each poll group sees the changed
 * group and sends its controllers the ANA change AEN, and the ANA log page lists the namespace in its new group.
 */
static void ns_ana_group_paused(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	struct call *c = arg;
	if (status) {
		finish(c, status, "SPDK could not pause subsystem %s", c->s1);
		return;
	}
	int rc = spdk_nvmf_subsystem_set_ns_ana_group(s, (uint32_t)c->i1, (uint32_t)c->i2);
	resume_with(s, c, rc ? -EINVAL : 0, rc ? "SPDK could not move namespace %d of %s to ANA group %d" : NULL,
		    c->i1, c->s1, c->i2);
}

static void do_ns_ana_group(struct call *c)
{
	pause_then(c, (uint32_t)c->i1, ns_ana_group_paused);
}

static void JNICALL n_namespace_ana_group(JNIEnv *env, jclass cls, jstring nqn, jint nsid, jint group)
{
	(void)cls;
	nqn_call2(env, do_ns_ana_group, nqn, NULL, NULL, nsid, group, false);
}

/* ------------------------------------------------------------------ listeners and referrals */

/* Fills c->trid from s3 (TCP|RDMA), s4 (address), s5 (service); false with the call finished if bad. */
static bool fill_trid(struct call *c, const char *subnqn)
{
	struct spdk_nvme_transport_id *t = &c->trid;
	memset(t, 0, sizeof(*t));
	if (spdk_nvme_transport_id_parse_trtype(&t->trtype, c->s3) != 0) {
		finish(c, -EINVAL, "unknown transport %s", c->s3);
		return false;
	}
	spdk_nvme_transport_id_populate_trstring(t, spdk_nvme_transport_id_trtype_str(t->trtype));
	t->adrfam = strchr(c->s4, ':') ? SPDK_NVMF_ADRFAM_IPV6 : SPDK_NVMF_ADRFAM_IPV4;
	snprintf(t->traddr, sizeof(t->traddr), "%s", c->s4);
	snprintf(t->trsvcid, sizeof(t->trsvcid), "%s", c->s5);
	if (subnqn)
		snprintf(t->subnqn, sizeof(t->subnqn), "%s", subnqn);
	return true;
}

static void do_listen(struct call *c)
{
	if (!fill_trid(c, NULL))
		return;
	struct spdk_nvmf_listen_opts o;
	spdk_nvmf_listen_opts_init(&o, sizeof(o));
	o.secure_channel = c->b1; /* TCP: SPDK's ssl socket (TLS 1.3 with the hosts' PSKs) instead of posix */
	int rc = spdk_nvmf_tgt_listen_ext(g_tgt, &c->trid, &o);
	finish(c, rc, rc ? "SPDK could not listen on %s %s:%s: %s" : NULL, c->s3, c->s4, c->s5, spdk_strerror(-rc));
}

static void do_stop_listen(struct call *c)
{
	if (!fill_trid(c, NULL))
		return;
	int rc = spdk_nvmf_tgt_stop_listen(g_tgt, &c->trid);
	finish(c, rc, rc ? "SPDK could not stop listening on %s %s:%s" : NULL, c->s3, c->s4, c->s5);
}

/*
 * Transport listeners are reference-counted the way SPDK's own RPCs count them: do_listen() takes one
 * reference for the engine's binding, and every subsystem listener holds one more (taken here, dropped by
 * spdk_nvmf_transport_stop_listen_async() on removal, by do_delete_subsystem() and by SPDK's shutdown, which
 * stops one reference per subsystem listener). A listener shared by two subsystems therefore outlives
 * either one's removal.
 */
static void listener_added(void *arg, int status)
{
	struct call *c = arg;
	if (status)
		spdk_nvmf_tgt_stop_listen(g_tgt, &c->trid);
	resume_with(c->subsystem, c, status, status ? "SPDK could not add listener %s %s:%s to %s" : NULL,
		    c->s3, c->s4, c->s5, c->s1);
}

static void listener_add_paused(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	struct call *c = arg;
	if (status) {
		finish(c, status, "SPDK could not pause subsystem %s", c->s1);
		return;
	}
	c->subsystem = s;
	struct spdk_nvmf_listen_opts o;
	spdk_nvmf_listen_opts_init(&o, sizeof(o));
	o.secure_channel = c->b1;
	int rc = spdk_nvmf_tgt_listen_ext(g_tgt, &c->trid, &o);
	if (rc) {
		resume_with(s, c, rc, "SPDK could not listen on %s %s:%s for %s: %s", c->s3, c->s4, c->s5, c->s1,
			    spdk_strerror(-rc));
		return;
	}
	struct spdk_nvmf_listener_opts lo;
	spdk_nvmf_subsystem_listener_opts_init(&lo, sizeof(lo));
	lo.secure_channel = c->b1;
	spdk_nvmf_subsystem_add_listener_ext(s, &c->trid, listener_added, c, &lo);
}

static void listener_stopped(void *arg, int status)
{
	struct call *c = arg;
	resume_with(c->subsystem, c, status, status ? "SPDK could not disconnect the hosts of listener %s %s:%s" : NULL,
		    c->s3, c->s4, c->s5);
}

static void listener_remove_paused(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	struct call *c = arg;
	if (status) {
		finish(c, status, "SPDK could not pause subsystem %s", c->s1);
		return;
	}
	c->subsystem = s;
	int rc = spdk_nvmf_subsystem_remove_listener(s, &c->trid);
	if (rc) {
		resume_with(s, c, rc, "SPDK could not remove listener %s %s:%s from %s", c->s3, c->s4, c->s5, c->s1);
		return;
	}
	struct spdk_nvmf_transport *t = spdk_nvmf_tgt_get_transport(g_tgt, c->trid.trstring);
	if (!t) {
		resume_with(s, c, 0, NULL);
		return;
	}
	rc = spdk_nvmf_transport_stop_listen_async(t, &c->trid, s, listener_stopped, c);
	if (rc)
		resume_with(s, c, rc, "SPDK could not disconnect the hosts of listener %s %s:%s", c->s3, c->s4, c->s5);
}

static void do_subsystem_listener(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s || !fill_trid(c, NULL))
		return;
	int rc = spdk_nvmf_subsystem_pause(s, 0, c->i1 ? listener_add_paused : listener_remove_paused, c);
	if (rc)
		finish(c, rc, "SPDK could not pause subsystem %s", c->s1);
}

/*
 * A listener's ANA group state (i1: group, i2: ANAS): SPDK changes it only while the subsystem is paused, then
 * sends the ANA change notice to the controllers connected through that listener (those whose Async Event
 * Configuration allows it) before the callback.
 */
static void ana_state_set(void *arg, int status)
{
	struct call *c = arg;
	resume_with(c->subsystem, c, status, status ? "SPDK could not set ANA group %d to state %d through listener "
		    "%s %s:%s of %s" : NULL, c->i1, c->i2, c->s3, c->s4, c->s5, c->s1);
}

static void ana_state_paused(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	struct call *c = arg;
	if (status) {
		finish(c, status, "SPDK could not pause subsystem %s", c->s1);
		return;
	}
	c->subsystem = s;
	spdk_nvmf_subsystem_set_ana_state(s, &c->trid, (enum spdk_nvme_ana_state)c->i2, (uint32_t)c->i1,
					  ana_state_set, c);
}

static void do_ana_state(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s || !fill_trid(c, NULL))
		return;
	if (c->i1 < 1) { /* group 0 would set every group */
		finish(c, -EINVAL, "ANA group %d: must be 1 or more", c->i1);
		return;
	}
	int rc = spdk_nvmf_subsystem_pause(s, 0, ana_state_paused, c);
	if (rc)
		finish(c, rc, "SPDK could not pause subsystem %s", c->s1);
}

static void referral_call(struct call *c)
{
	if (!fill_trid(c, SPDK_NVMF_DISCOVERY_NQN))
		return;
	struct spdk_nvmf_referral_opts o;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.trid = c->trid;
	o.allow_any_host = true;
	int rc = c->i1 ? spdk_nvmf_tgt_add_referral(g_tgt, &o) : spdk_nvmf_tgt_remove_referral(g_tgt, &o);
	finish(c, rc, rc ? "SPDK could not %s referral %s %s:%s" : NULL, c->i1 ? "add" : "remove", c->s3, c->s4, c->s5);
}

static void addr_call(JNIEnv *env, call_fn fn, jstring nqn, jstring trtype, jstring traddr, jstring trsvcid, int i1,
		      int i2, bool secure)
{
	struct call *c = call_new(fn);
	if (!c)
		return;
	if ((nqn && !jstr(env, nqn, c->s1, sizeof(c->s1), "nqn")) ||
	    !jstr(env, trtype, c->s3, sizeof(c->s3), "transport") ||
	    !jstr(env, traddr, c->s4, sizeof(c->s4), "address") ||
	    !jstr(env, trsvcid, c->s5, 33, "port")) {
		call_put(c);
		call_put(c);
		return;
	}
	c->i1 = i1;
	c->i2 = i2;
	c->b1 = secure;
	if (run_call(env, c) == 0)
		call_put(c);
}

static void JNICALL n_listen(JNIEnv *env, jclass cls, jstring trtype, jstring traddr, jstring trsvcid,
			     jboolean secure)
{
	(void)cls;
	addr_call(env, do_listen, NULL, trtype, traddr, trsvcid, 0, 0, secure);
}

static void JNICALL n_stop_listen(JNIEnv *env, jclass cls, jstring trtype, jstring traddr, jstring trsvcid)
{
	(void)cls;
	addr_call(env, do_stop_listen, NULL, trtype, traddr, trsvcid, 0, 0, false);
}

static void JNICALL n_add_listener(JNIEnv *env, jclass cls, jstring nqn, jstring trtype, jstring traddr,
				   jstring trsvcid, jboolean secure)
{
	(void)cls;
	addr_call(env, do_subsystem_listener, nqn, trtype, traddr, trsvcid, 1, 0, secure);
}

static void JNICALL n_remove_listener(JNIEnv *env, jclass cls, jstring nqn, jstring trtype, jstring traddr,
				      jstring trsvcid)
{
	(void)cls;
	addr_call(env, do_subsystem_listener, nqn, trtype, traddr, trsvcid, 0, 0, false);
}

static void JNICALL n_set_ana_state(JNIEnv *env, jclass cls, jstring nqn, jstring trtype, jstring traddr,
				    jstring trsvcid, jint group, jint anas)
{
	(void)cls;
	addr_call(env, do_ana_state, nqn, trtype, traddr, trsvcid, group, anas, false);
}

static void JNICALL n_referral(JNIEnv *env, jclass cls, jboolean add, jstring trtype, jstring traddr,
			       jstring trsvcid)
{
	(void)cls;
	addr_call(env, referral_call, NULL, trtype, traddr, trsvcid, add ? 1 : 0, 0, false);
}

/* ------------------------------------------------------------------ state and statistics */

/*
 * One line per live controller: cntlid, hostnqn (its bytes in hex: SPDK takes any bytes a host's Connect puts
 * there, tabs and newlines included), hostid (32 hex digits), the host address of the admin queue
 * (trtype:traddr:trsvcid), kato (ms), the qids of its I/O queues (comma-separated); tab-separated. The subsystem's
 * controller list only changes on this (the subsystem's) thread, so it is read without pausing the subsystem.
 */
static void do_controllers(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	struct spdk_nvmf_ctrlr *ctrlr;
	TAILQ_FOREACH(ctrlr, &s->ctrlrs, link) {
		char hostid[33];
		for (int i = 0; i < 16; i++)
			snprintf(hostid + 2 * i, 3, "%02x", ctrlr->hostid.u.raw[i]);
		char hostnqn[2 * sizeof(ctrlr->hostnqn) + 1];
		size_t n = strnlen(ctrlr->hostnqn, sizeof(ctrlr->hostnqn));
		for (size_t i = 0; i < n; i++)
			snprintf(hostnqn + 2 * i, 3, "%02x", (unsigned char)ctrlr->hostnqn[i]);
		hostnqn[2 * n] = '\0';
		struct spdk_nvme_transport_id peer;
		memset(&peer, 0, sizeof(peer));
		char addr[300] = "-";
		if (ctrlr->admin_qpair && spdk_nvmf_qpair_get_peer_trid(ctrlr->admin_qpair, &peer) == 0)
			snprintf(addr, sizeof(addr), "%s:%s:%s", peer.trstring, peer.traddr, peer.trsvcid);
		appendf(c, "%u\t%s\t%s\t%s\t%u\t", ctrlr->cntlid, hostnqn, hostid, addr,
			ctrlr->feat.keep_alive_timer.bits.kato);
		/* qpair_mask has a bit per connected queue, the admin queue's (bit 0) included */
		const char *sep = "";
		for (uint32_t qid = spdk_bit_array_find_first_set(ctrlr->qpair_mask, 1); qid != UINT32_MAX;
		     qid = spdk_bit_array_find_first_set(ctrlr->qpair_mask, qid + 1)) {
			appendf(c, "%s%u", sep, qid);
			sep = ",";
		}
		appendf(c, "\n");
	}
	finish(c, 0, NULL);
}

static jstring JNICALL n_controllers(JNIEnv *env, jclass cls, jstring nqn)
{
	(void)cls;
	return text_call(env, do_controllers, nqn, "nqn", false);
}

/*
 * One line per bdev, and one more per alias of it (an lvol's <store>/<lvol>, which namespaces name): name, read ops,
 * bytes read, write ops, bytes written, unmap ops, bytes unmapped, read latency ticks, write latency ticks, tick
 * rate; tab-separated.
 */
static void next_bdev_stat(struct call *c);

static void bdev_stat_line(struct call *c, const char *name, const struct spdk_bdev_io_stat *st)
{
	appendf(c, "%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
		"\t%" PRIu64 "\t%" PRIu64 "\n", name, st->num_read_ops, st->bytes_read, st->num_write_ops,
		st->bytes_written, st->num_unmap_ops, st->bytes_unmapped, st->read_latency_ticks,
		st->write_latency_ticks, st->ticks_rate);
}

static void bdev_stat_done(struct spdk_bdev *bdev, struct spdk_bdev_io_stat *st, void *arg, int rc)
{
	struct call *c = arg;
	if (rc == 0) {
		bdev_stat_line(c, spdk_bdev_get_name(bdev), st);
		const struct spdk_bdev_alias *a;
		TAILQ_FOREACH(a, spdk_bdev_get_aliases(bdev), tailq)
			bdev_stat_line(c, a->alias.name, st);
	}
	c->bdev_at++;
	next_bdev_stat(c);
}

static void next_bdev_stat(struct call *c)
{
	if (c->bdev_at >= c->nbdevs) {
		finish(c, 0, NULL);
		return;
	}
	memset(c->stat, 0, sizeof(*c->stat));
	spdk_bdev_get_device_stat(c->bdevs[c->bdev_at], c->stat, SPDK_BDEV_RESET_STAT_NONE, bdev_stat_done, c);
}

static void do_bdev_stats(struct call *c)
{
	int n = 0;
	for (struct spdk_bdev *b = spdk_bdev_first(); b; b = spdk_bdev_next(b))
		n++;
	c->bdevs = calloc((size_t)n + 1, sizeof(*c->bdevs));
	c->stat = calloc(1, sizeof(*c->stat));
	if (!c->bdevs || !c->stat) {
		finish(c, -ENOMEM, "out of memory");
		return;
	}
	for (struct spdk_bdev *b = spdk_bdev_first(); b && c->nbdevs < n; b = spdk_bdev_next(b))
		c->bdevs[c->nbdevs++] = b;
	next_bdev_stat(c);
}

static void thread_stat_one(void *arg)
{
	struct call *c = arg;
	struct spdk_thread_stats st;
	if (spdk_thread_get_stats(&st) == 0) {
		c->acc[0] += st.busy_tsc;
		c->acc[1] += st.idle_tsc;
	}
}

static void thread_stat_done(void *arg)
{
	struct call *c = arg;
	appendf(c, "%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", c->acc[0], c->acc[1], spdk_get_ticks_hz());
	finish(c, 0, NULL);
}

/* busy tsc, idle tsc, tick rate (summed over SPDK's threads) */
static void do_thread_stats(struct call *c)
{
	spdk_for_each_thread(thread_stat_one, c, thread_stat_done);
}

static void pg_stat_one(struct spdk_io_channel_iter *i)
{
	struct call *c = spdk_io_channel_iter_get_ctx(i);
	struct spdk_nvmf_poll_group *g = spdk_io_channel_get_ctx(spdk_io_channel_iter_get_channel(i));
	c->acc[0] += g->stat.admin_qpairs;
	c->acc[1] += g->stat.io_qpairs;
	c->acc[2] += g->stat.current_admin_qpairs;
	c->acc[3] += g->stat.current_io_qpairs;
	c->acc[4] += g->stat.pending_bdev_io;
	c->acc[5] += g->stat.completed_nvme_io;
	c->acc[6] += 1;
	spdk_for_each_channel_continue(i, 0);
}

static void pg_stat_done(struct spdk_io_channel_iter *i, int status)
{
	struct call *c = spdk_io_channel_iter_get_ctx(i);
	appendf(c, "%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
		c->acc[6], c->acc[0], c->acc[1], c->acc[2], c->acc[3], c->acc[4], c->acc[5]);
	finish(c, status, status ? "SPDK could not read the poll groups" : NULL);
}

/* poll groups, admin qpairs (cumulative), I/O qpairs (cumulative), current admin, current I/O,
 * pending bdev I/O, completed NVMe I/O */
static void do_pg_stats(struct call *c)
{
	spdk_for_each_channel(g_tgt, pg_stat_one, c, pg_stat_done);
}

static jstring stat_call(JNIEnv *env, call_fn fn)
{
	return text_call(env, fn, NULL, NULL, true);
}

static jstring JNICALL n_bdev_stats(JNIEnv *env, jclass cls)
{
	(void)cls;
	return stat_call(env, do_bdev_stats);
}

static jstring JNICALL n_thread_stats(JNIEnv *env, jclass cls)
{
	(void)cls;
	return stat_call(env, do_thread_stats);
}

static jstring JNICALL n_poll_group_stats(JNIEnv *env, jclass cls)
{
	(void)cls;
	return stat_call(env, do_pg_stats);
}

/* ------------------------------------------------------------------ lvol stores (pools of kind lvol) */

/*
 * A pool of kind lvol is an SPDK lvol store named like the pool on a base bdev; its volumes and snapshots are
 * lvols of that store, so each one's bdev has the alias <pool>/<lvol> that namespaces name. Every step runs on
 * the app thread and finishes the call from SPDK's completion callback.
 */

static void lvs_made(void *arg, struct spdk_lvol_store *lvs, int rc)
{
	struct call *c = arg;
	(void)lvs;
	if (rc)
		finish(c, rc, "SPDK could not make lvol store %s on bdev %s: %s", c->s2, c->s1, spdk_strerror(-rc));
	else {
		appendf(c, "created");
		finish(c, 0, NULL);
	}
}

/* After every examine (a store on the base bdev is loaded by then): the store named s2, else a new one on s1. */
static void lvs_examined(void *arg)
{
	struct call *c = arg;
	struct spdk_lvol_store *lvs = vbdev_get_lvol_store_by_name(c->s2);
	if (lvs) {
		struct lvol_store_bdev *lb = vbdev_get_lvs_bdev_by_lvs(lvs);
		const char *base = lb && lb->bdev ? spdk_bdev_get_name(lb->bdev) : "";
		if (strcmp(base, c->s1) != 0) {
			finish(c, -EEXIST, "SPDK has lvol store %s on bdev %s already, not on %s", c->s2, base, c->s1);
			return;
		}
		appendf(c, "loaded");
		finish(c, 0, NULL);
		return;
	}
	if (!spdk_bdev_get_by_name(c->s1)) {
		finish(c, -ENOENT, "SPDK has no bdev %s for lvol store %s", c->s1, c->s2);
		return;
	}
	int rc = vbdev_lvs_create(c->s1, c->s2, (uint32_t)c->u1, LVS_CLEAR_WITH_UNMAP, 0, lvs_made, c);
	if (rc)
		finish(c, rc, "SPDK could not make lvol store %s on bdev %s: %s", c->s2, c->s1, spdk_strerror(-rc));
}

static void do_open_lvs(struct call *c)
{
	int rc = spdk_bdev_wait_for_examine(lvs_examined, c);
	if (rc)
		finish(c, rc, "SPDK could not wait for its bdevs' examine: %s", spdk_strerror(-rc));
}

static void lvs_destroyed(void *arg, int rc)
{
	struct call *c = arg;
	if (rc)
		finish(c, rc, "SPDK could not remove lvol store %s: %s", c->s2, spdk_strerror(-rc));
	else
		finish(c, 0, NULL);
}

static struct spdk_lvol_store *find_lvs(struct call *c)
{
	struct spdk_lvol_store *lvs = vbdev_get_lvol_store_by_name(c->s2);
	if (!lvs)
		finish(c, -ENOENT, "SPDK has no lvol store %s", c->s2);
	return lvs;
}

static void do_remove_lvs(struct call *c)
{
	struct spdk_lvol_store *lvs = find_lvs(c);
	if (lvs)
		vbdev_lvs_destruct(lvs, lvs_destroyed, c);
}

/* One past the blob's last allocated cluster (0: none allocated): where the data written into the blob itself ends. */
static uint64_t data_end_clusters(struct spdk_blob *blob, uint64_t io_units_per_cluster)
{
	uint64_t clusters = spdk_blob_get_num_clusters(blob);
	uint64_t end = 0;
	uint64_t next = 0;
	while (next < clusters) {
		uint64_t at = spdk_blob_get_next_allocated_io_unit(blob, next * io_units_per_cluster);
		if (at == UINT64_MAX || at / io_units_per_cluster >= clusters)
			break;
		end = at / io_units_per_cluster + 1;
		next = end;
	}
	return end;
}

/* The name of the lvol of store lvs that lvol l was cloned or snapshotted from ("": none, or not an lvol). */
static const char *parent_name(struct spdk_lvol_store *lvs, struct spdk_lvol *l)
{
	spdk_blob_id parent = spdk_blob_get_parent_snapshot(lvs->blobstore, l->blob_id);
	struct spdk_lvol *p;
	TAILQ_FOREACH(p, &lvs->lvols, link) {
		if (parent != SPDK_BLOBID_INVALID && p->blob_id == parent)
			return p->name;
	}
	return "";
}

/*
 * The store's capacity and lvols as text: "<cluster bytes> <total clusters> <free clusters> <block bytes>", then
 * one line per lvol "<name>\t<allocated clusters>\t<clusters>\t<thin 0|1>\t<snapshot 0|1>\t<data end in clusters>
 * \t<parent>" (the snapshot it depends on, empty when none).
 */
static void do_lvs_info(struct call *c)
{
	struct spdk_lvol_store *lvs = find_lvs(c);
	if (!lvs)
		return;
	struct spdk_blob_store *bs = lvs->blobstore;
	uint64_t per_cluster = spdk_bs_get_cluster_size(bs) / spdk_bs_get_io_unit_size(bs);
	appendf(c, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", spdk_bs_get_cluster_size(bs),
		spdk_bs_total_data_cluster_count(bs), spdk_bs_free_cluster_count(bs), spdk_bs_get_io_unit_size(bs));
	struct spdk_lvol *l;
	TAILQ_FOREACH(l, &lvs->lvols, link) {
		if (!l->blob)
			continue;
		appendf(c, "%s\t%" PRIu64 "\t%" PRIu64 "\t%d\t%d\t%" PRIu64 "\t%s\n", l->name,
			spdk_blob_get_num_allocated_clusters(l->blob), spdk_blob_get_num_clusters(l->blob),
			spdk_blob_is_thin_provisioned(l->blob) ? 1 : 0, spdk_blob_is_snapshot(l->blob) ? 1 : 0,
			data_end_clusters(l->blob, per_cluster), parent_name(lvs, l));
	}
	finish(c, 0, NULL);
}

static void lvol_made(void *arg, struct spdk_lvol *lvol, int rc)
{
	struct call *c = arg;
	(void)lvol;
	if (rc)
		finish(c, rc, "SPDK could not make lvol %s/%s: %s", c->s2, c->s4, spdk_strerror(-rc));
	else
		finish(c, 0, NULL);
}

static void lvol_done(void *arg, int rc)
{
	struct call *c = arg;
	if (rc)
		finish(c, rc, "SPDK could not change lvol %s/%s: %s", c->s2, c->s3, spdk_strerror(-rc));
	else
		finish(c, 0, NULL);
}

static struct spdk_lvol *find_lvol(struct call *c)
{
	struct spdk_lvol *l = vbdev_get_lvol_store_by_name(c->s2) ? spdk_lvol_get_by_names(c->s2, c->s3) : NULL;
	if (!l)
		finish(c, -ENOENT, "SPDK has no lvol %s/%s", c->s2, c->s3);
	return l;
}

enum lvol_op { LVOL_CREATE, LVOL_RESIZE, LVOL_DESTROY, LVOL_SNAPSHOT, LVOL_CLONE };

/* s2 store, s3 lvol, s4 new lvol (create: s3), u1 bytes, b1 thin, i1 the lvol_op. */
static void do_lvol(struct call *c)
{
	if (c->i1 == LVOL_CREATE) {
		struct spdk_lvol_store *lvs = find_lvs(c);
		if (!lvs)
			return;
		int rc = vbdev_lvol_create(lvs, c->s4, c->u1, c->b1, LVOL_CLEAR_WITH_DEFAULT, lvol_made, c);
		if (rc)
			finish(c, rc, "SPDK could not make lvol %s/%s: %s", c->s2, c->s4, spdk_strerror(-rc));
		return;
	}
	struct spdk_lvol *l = find_lvol(c);
	if (!l)
		return;
	switch (c->i1) {
	case LVOL_RESIZE:
		vbdev_lvol_resize(l, c->u1, lvol_done, c);
		break;
	case LVOL_DESTROY:
		/* SPDK merges a snapshot with one dependent into it and refuses one with more */
		vbdev_lvol_destroy(l, lvol_done, c);
		break;
	case LVOL_SNAPSHOT:
		vbdev_lvol_create_snapshot(l, c->s4, lvol_made, c);
		break;
	case LVOL_CLONE:
		vbdev_lvol_create_clone(l, c->s4, lvol_made, c);
		break;
	default:
		finish(c, -EINVAL, "no lvol operation %d", c->i1);
	}
}

static jstring JNICALL n_lvs(JNIEnv *env, jclass cls, jint op, jstring base, jstring name, jlong cluster_bytes)
{
	(void)cls;
	static const call_fn fns[] = {do_open_lvs, do_remove_lvs, do_lvs_info};
	if (op < 0 || op > 2) {
		throw_spdk(env, -EINVAL, "no lvol store operation");
		return NULL;
	}
	struct call *c = call_new(fns[op]);
	if (!c)
		return NULL;
	if ((base && !jstr(env, base, c->s1, sizeof(c->s1), "base bdev")) ||
	    !jstr(env, name, c->s2, SPDK_LVS_NAME_MAX, "lvol store")) {
		call_put(c);
		call_put(c);
		return NULL;
	}
	c->u1 = (uint64_t)cluster_bytes;
	if (run_call(env, c) != 0)
		return NULL;
	return take_out(env, c);
}

static void JNICALL n_lvol(JNIEnv *env, jclass cls, jint op, jstring lvs, jstring lvol, jstring made, jlong bytes,
			   jboolean thin)
{
	(void)cls;
	struct call *c = call_new(do_lvol);
	if (!c)
		return;
	if (!jstr(env, lvs, c->s2, SPDK_LVS_NAME_MAX, "lvol store") ||
	    !jstr(env, lvol, c->s3, SPDK_LVOL_NAME_MAX, "lvol") ||
	    (made && !jstr(env, made, c->s4, SPDK_LVOL_NAME_MAX, "new lvol"))) {
		call_put(c);
		call_put(c);
		return;
	}
	c->i1 = op;
	c->u1 = (uint64_t)bytes;
	c->b1 = thin;
	if (run_call(env, c) == 0)
		call_put(c);
}

/* Pauses subsystem s1 until resumeSubsystem, the commands on namespace i1 (0: none awaited) completed first. */
static void paused_only(struct spdk_nvmf_subsystem *s, void *arg, int status)
{
	(void)s;
	struct call *c = arg;
	if (status)
		finish(c, status, "SPDK could not pause subsystem %s", c->s1);
	else
		finish(c, 0, NULL);
}

static void do_pause(struct call *c)
{
	pause_then(c, (uint32_t)c->i1, paused_only);
}

static void do_resume(struct call *c)
{
	struct spdk_nvmf_subsystem *s = find_subsystem(c);
	if (!s)
		return;
	c->rc = 0;
	int rc = spdk_nvmf_subsystem_resume(s, resumed, c);
	if (rc)
		finish(c, rc, "SPDK could not resume subsystem %s", c->s1);
}

static void JNICALL n_pause_subsystem(JNIEnv *env, jclass cls, jstring nqn, jint nsid, jboolean pause)
{
	(void)cls;
	nqn_call(env, pause ? do_pause : do_resume, nqn, NULL, NULL, nsid, false);
}

/* ------------------------------------------------------------------ test hook: a stalled app thread */

/* Posted by hold_on_app once the app thread runs it; released by releaseAppThread. */
static sem_t g_held, g_hold_release;
static atomic_bool g_hold_init;

static void hold_on_app(void *arg)
{
	(void)arg;
	sem_post(&g_held);
	while (sem_wait(&g_hold_release) != 0 && errno == EINTR) {
	}
}

/*
 * Blocks SPDK's app thread until releaseAppThread(), as a slow SPDK step would, and returns once it is blocked;
 * tests use it to make a control call outlast its timeout.
 */
static void JNICALL n_hold_app_thread(JNIEnv *env, jclass cls)
{
	(void)cls;
	bool expected = false;
	if (atomic_compare_exchange_strong(&g_hold_init, &expected, true)) {
		sem_init(&g_held, 0, 0);
		sem_init(&g_hold_release, 0, 0);
	}
	pthread_rwlock_rdlock(&g_send_lock);
	if (atomic_load(&g_state) != ST_RUNNING) {
		pthread_rwlock_unlock(&g_send_lock);
		throw_spdk(env, -ENODEV, "SPDK is not running");
		return;
	}
	int rc = spdk_thread_send_msg(g_app_thread, hold_on_app, NULL);
	pthread_rwlock_unlock(&g_send_lock);
	if (rc != 0) {
		throw_spdk(env, rc, "SPDK's app thread refused the message (its queue is full)");
		return;
	}
	while (sem_wait(&g_held) != 0 && errno == EINTR) {
	}
}

static void JNICALL n_release_app_thread(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	if (atomic_load(&g_hold_init))
		sem_post(&g_hold_release);
}

static jint JNICALL n_abi_version(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	return NVMF4J_SPDK_ABI_VERSION;
}

static jstring JNICALL n_version(JNIEnv *env, jclass cls)
{
	(void)cls;
	return (*env)->NewStringUTF(env, SPDK_VERSION_STRING);
}

#define S "Ljava/lang/String;"
static const JNINativeMethod methods[] = {
	{"abiVersion", "()I", (void *)n_abi_version},
	{"version", "()" S, (void *)n_version},
	{"start", "(" S S "IZZZI)V", (void *)n_start},
	{"stop", "()I", (void *)n_stop},
	{"running", "()Z", (void *)n_running},
	{"createTransport", "(" S "[I)V", (void *)n_create_transport},
	{"createBdev", "(" S S "JII" S ")V", (void *)n_create_bdev},
	{"deleteBdev", "(" S S ")V", (void *)n_delete_bdev},
	{"resizeBdev", "(" S S "J)V", (void *)n_resize_bdev},
	{"bdevQos", "(" S "JJJJ)V", (void *)n_bdev_qos},
	{"createSubsystem", "(" S S S "IIIZ)V", (void *)n_create_subsystem},
	{"deleteSubsystem", "(" S ")V", (void *)n_delete_subsystem},
	{"setAllowAnyHost", "(" S "Z)V", (void *)n_set_allow_any_host},
	{"addHost", "(" S S S S S ")V", (void *)n_add_host},
	{"addKey", "(" S S ")V", (void *)n_add_key},
	{"removeKey", "(" S ")V", (void *)n_remove_key},
	{"reloadPsk", "(" S S S ")V", (void *)n_reload_psk},
	{"removeHost", "(" S S ")V", (void *)n_remove_host},
	{"disconnectHost", "(" S S ")V", (void *)n_disconnect_host},
	{"addNamespace", "(" S "I" S "[B[B[BZI" S ")I", (void *)n_add_namespace},
	{"namespaceHost", "(" S "I" S "Z)V", (void *)n_namespace_host},
	{"removeNamespace", "(" S "I)V", (void *)n_remove_namespace},
	{"namespaceAnaGroup", "(" S "II)V", (void *)n_namespace_ana_group},
	{"listen", "(" S S S "Z)V", (void *)n_listen},
	{"stopListen", "(" S S S ")V", (void *)n_stop_listen},
	{"addListener", "(" S S S S "Z)V", (void *)n_add_listener},
	{"removeListener", "(" S S S S ")V", (void *)n_remove_listener},
	{"setAnaState", "(" S S S S "II)V", (void *)n_set_ana_state},
	{"referral", "(Z" S S S ")V", (void *)n_referral},
	{"controllers", "(" S ")" S, (void *)n_controllers},
	{"bdevStats", "()" S, (void *)n_bdev_stats},
	{"threadStats", "()" S, (void *)n_thread_stats},
	{"pollGroupStats", "()" S, (void *)n_poll_group_stats},
	{"bdevLatency", "(" S ")" S, (void *)n_bdev_latency},
	{"lvs", "(I" S S "J)" S, (void *)n_lvs},
	{"lvol", "(I" S S S "JZ)V", (void *)n_lvol},
	{"pauseSubsystem", "(" S "IZ)V", (void *)n_pause_subsystem},
	{"holdAppThread", "()V", (void *)n_hold_app_thread},
	{"releaseAppThread", "()V", (void *)n_release_app_thread},
};
#undef S

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	(void)reserved;
	JNIEnv *env;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
		return JNI_ERR;
	jclass cls = nvmf4j_jni_checked_class(env, "nvmf4j_spdk", NATIVE_CLASS, NVMF4J_SPDK_ABI_VERSION);
	if (!cls)
		return JNI_ERR;
	if ((*env)->RegisterNatives(env, cls, methods, sizeof(methods) / sizeof(methods[0])) != JNI_OK)
		return JNI_ERR;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&g_state_changed, &attr);
	pthread_condattr_destroy(&attr);
	/* exit() runs its handlers last registered first; the one that runs the shared libraries' destructors
	 * (the dynamic loader's) was registered at the process's start, so this one runs before them */
	if (atexit(stop_at_exit) != 0)
		return JNI_ERR;
	return JNI_VERSION_1_8;
}
