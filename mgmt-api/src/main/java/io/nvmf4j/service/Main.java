package io.nvmf4j.service;

import io.nvmf4j.config.ConfigException;
import io.nvmf4j.runtime.NettyDefaults;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The nvmf4j service launcher: starts the {@link Service} (target and management API) from the state
 * directory and runs in the foreground until SIGTERM or SIGINT, then stops the API, disconnects hosts
 * and flushes the block devices. An {@link Error} that no code catches, in any thread (an
 * {@link OutOfMemoryError} most likely), stops it the same way with exit status {@link #FATAL}: the JVM must
 * not go on with a thread missing, nor exit with the engine's threads still running.
 */
@Command(name = "nvmf4j-target", mixinStandardHelpOptions = true, version = "nvmf4j 0.1.0",
    description = {"NVMe-over-Fabrics target (NVMe/TCP and NVMe/RDMA). Runs in the foreground; stop with SIGTERM "
        + "or Ctrl-C.", "'nvmf4j-target check-config FILE' checks a configuration without starting; 'check --profile "
        + "NAME' checks the machine against a DPU profile and 'setup --profile NAME' prepares it."},
    subcommands = {Main.CheckConfig.class, io.nvmf4j.service.profile.ProfileCommands.Check.class,
        io.nvmf4j.service.profile.ProfileCommands.Setup.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:stopped cleanly (SIGTERM or Ctrl-C)", "1:cannot start (a port taken, an engine that cannot "
        + "run here), or a stop that failed or did not end within --stop-timeout", "2:bad usage or a bad configuration (every bad field is named)", "3:stopped after a fatal "
        + "error (an OutOfMemoryError or another Error no code caught, in any thread), named in one log line"})
public final class Main implements Callable<Integer> {
    static {
        NettyDefaults.apply(); // before anything loads Netty
    }

    private static final Logger LOG = LoggerFactory.getLogger(Main.class);

    /** The exit status after a fatal error: an {@link Error} that ended a thread. */
    static final int FATAL = 3;

    /**
     * The first fatal error ({@link #uncaught}) as its log line's text, null while there is none. The shutdown
     * hook logs it as the reason it stops and exits with {@link #FATAL}.
     */
    private static final AtomicReference<String> FATAL_ERROR = new AtomicReference<>();
    /** {@link #FATAL_ERROR}'s text when the heap has no room left to describe the error. */
    private static final String FATAL_WITHOUT_HEAP = "a fatal error (no heap left to describe it)";
    /** Whether the shutdown hook that stops the service is in place; before, a fatal error logs its line itself. */
    private static volatile boolean stopHook;

    @Option(names = "--state-dir", paramLabel = "DIR",
        description = "State directory (default: /var/lib/nvmf4j for root, ~/.local/state/nvmf4j otherwise).")
    Path stateDir;

    /** The default of {@code --stop-timeout}: below the unit's TimeoutStopSec (60), so the line is ours. */
    static final int DEFAULT_STOP_TIMEOUT_SECONDS = 50;

    @Option(names = "--stop-timeout", paramLabel = "SECONDS", defaultValue = "" + DEFAULT_STOP_TIMEOUT_SECONDS,
        description = "Bound of a stop (SIGTERM, Ctrl-C or a fatal error), 1..3600 seconds (default: ${DEFAULT-VALUE}, "
            + "below the unit's TimeoutStopSec=60): a stop that has not ended by then (a device that does not "
            + "finish its I/O or flush) is logged with where it waits, and the process exits with status 1 (3 after a "
            + "fatal error) without finishing it.")
    int stopTimeoutSeconds;

    @Option(names = "--config", paramLabel = "FILE",
        description = "Configuration file (default: <state-dir>/config.json; created with the embedded default "
            + "when absent).")
    Path configFile;

    public static void main(String[] args) {
        Thread.setDefaultUncaughtExceptionHandler(Main::uncaught);
        System.exit(new CommandLine(new Main()).execute(args));
    }

    /**
     * Every thread's uncaught exceptions. An {@link Error} is fatal: the first one is kept for the shutdown hook,
     * which logs it in one line, stops the service and exits with {@link #FATAL}. Each step is guarded: with the
     * heap exhausted the log line may fail, the exit still happens (Runtime.halt as the last resort; SPDK's
     * threads are then stopped by the spdk engine's exit handler). An exception other than an Error ends only
     * its thread, printed as the JVM would.
     */
    private static void uncaught(Thread t, Throwable e) {
        if (!(e instanceof Error)) {
            System.err.print("Exception in thread \"" + t.getName() + "\" ");
            e.printStackTrace();
            return;
        }
        String why;
        try {
            why = "a fatal error in thread " + t.getName() + ": " + e;
        } catch (Throwable noHeap) {
            why = FATAL_WITHOUT_HEAP;
        }
        if (!FATAL_ERROR.compareAndSet(null, why)) {
            return;  // the service is stopping already; System.exit here would wait for a hook that waits for it
        }
        try {
            if (!stopHook) {
                LOG.error("stopping on {}", why);
            }
        } catch (Throwable noLog) {
            // the exit matters more than its line
        }
        try {
            System.exit(FATAL);
        } catch (Throwable again) {
            Runtime.getRuntime().halt(FATAL);
        }
    }

    /** The configuration file: --config, else {@code <state-dir>/config.json}. */
    Path configPath() {
        Path dir = stateDir != null ? stateDir : StateDir.defaultDir();
        return configFile != null ? configFile : dir.resolve("config.json");
    }

    /**
     * {@code check-config [FILE]}: the checks of a start ({@link ConfigCheck}) and nothing else: no engine, no
     * API, no file written (no generated serial or NGUID, no api-token). A subcommand rather than an option
     * because it is a mode of its own, with its own argument, help and man page; the run options do not
     * apply to it, except that without FILE it checks the file a start would read.
     */
    @Command(name = "check-config", mixinStandardHelpOptions = true, version = "nvmf4j 0.1.0",
        description = {"Check a configuration document exactly as a start would (parse, validation, the API's "
            + "TLS files), without starting or writing anything.",
            "Prints 'FILE: valid' (exit 0), or one line 'FILE: field: problem' per bad field on stderr (exit 2)."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:valid", "2:invalid, unreadable, or bad usage"})
    static final class CheckConfig implements Callable<Integer> {
        @CommandLine.Parameters(paramLabel = "FILE", arity = "0..1", description = "The document (default: the "
            + "file a start would read: --config, else <state-dir>/config.json).")
        Path file;

        @CommandLine.ParentCommand
        Main main;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            Path f = file != null ? file : main.configPath();
            java.io.PrintWriter out = spec.commandLine().getOut();
            java.io.PrintWriter err = spec.commandLine().getErr();
            try {
                ConfigCheck.load(f, main.stateDir != null ? main.stateDir : StateDir.defaultDir());
                out.println(f + ": valid");
                out.flush();
                return 0;
            } catch (ConfigException e) {
                e.problems().forEach(p -> err.println(f + ": " + p));
            } catch (java.nio.file.NoSuchFileException e) {
                err.println(f + ": no such file");
            } catch (IOException e) {
                err.println(f + ": cannot read: " + e.getMessage());
            }
            err.flush();
            return 2;
        }
    }

    @Override
    public Integer call() throws Exception {
        if (stopTimeoutSeconds < 1 || stopTimeoutSeconds > 3600) {
            System.err.println("nvmf4j-target: --stop-timeout: must be 1..3600 seconds, got " + stopTimeoutSeconds);
            return 2;
        }
        Path dir = stateDir != null ? stateDir : StateDir.defaultDir();
        Path file = configPath();
        Service service;
        try {
            service = Service.start(dir, file);
        } catch (ConfigException e) {
            System.err.println("nvmf4j-target: " + file + ": " + e.getMessage());
            return 2;
        } catch (IOException | RuntimeException e) {
            System.err.println("nvmf4j-target: cannot start: " + e.getMessage());
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            String fatal = FATAL_ERROR.get();
            int status = fatal == null ? 0 : FATAL;
            boundStop(Thread.currentThread(), stopped, fatal == null ? 1 : FATAL);
            try {
                if (fatal == null) {
                    LOG.info("stopping: management API, then disconnecting hosts and flushing block devices");
                } else {
                    LOG.error("stopping on {}: management API, then disconnecting hosts and flushing block devices",
                        fatal);
                }
                service.close();
            } catch (RuntimeException e) {
                LOG.error("stopping failed: {}", e.toString());
                status = Math.max(status, 1);
            } catch (Error e) {
                status = FATAL;  // the service's own threads are stopped at exit (the spdk engine's exit handler)
            }
            stopped.countDown();
            // a stop by SIGTERM/SIGINT is the normal end: exit 0 (the JVM would report 128+signal)
            System.out.flush();
            System.err.flush();
            Runtime.getRuntime().halt(status);
        }, "nvmf4j-shutdown"));
        stopHook = true;
        service.announce();
        stopped.await();
        return 0;
    }

    /**
     * Bounds the stop the shutdown hook {@code stopper} runs: unless {@code stopped} is counted down within
     * {@code --stop-timeout}, logs one line with where the stop waits (the hook's frames) and halts with
     * {@code status}. A daemon thread, so a stop that ends in time ends the process as before.
     */
    private void boundStop(Thread stopper, CountDownLatch stopped, int status) {
        Thread bound = new Thread(() -> {
            try {
                if (stopped.await(stopTimeoutSeconds, java.util.concurrent.TimeUnit.SECONDS)) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            }
            try {
                StringBuilder at = new StringBuilder();
                StackTraceElement[] frames = stopper.getStackTrace();
                for (int i = 0; i < Math.min(frames.length, 12); i++) {
                    at.append(i == 0 ? "" : " < ").append(frames[i]);
                }
                LOG.error("stop did not end within {} s (--stop-timeout); exiting with status {} without finishing it; "
                    + "it waits at {}", stopTimeoutSeconds, status, at);
            } catch (Throwable noLog) {
                // the exit matters more than its line
            }
            System.out.flush();
            System.err.flush();
            Runtime.getRuntime().halt(status);
        }, "nvmf4j-stop-bound");
        bound.setDaemon(true);
        bound.start();
    }
}
