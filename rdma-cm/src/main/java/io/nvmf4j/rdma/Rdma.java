package io.nvmf4j.rdma;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Whether RDMA can be used here, and why not when it cannot.
 *
 * <p>Two levels: the native library loaded ({@link #isLibraryLoaded()}: the binding works, e.g.
 * arenas and arrays), and an RDMA device present ({@link #isAvailable()}: CM ids, PDs, QPs).
 * {@link #unavailabilityCause()} is one line, fit for a log: the library failure, or
 * {@code "no RDMA device: ..."}, or a missing {@code /dev/infiniband/rdma_cm}. A TCP-only target
 * checks this once and carries on.
 */
public final class Rdma {
    private static final System.Logger LOG = System.getLogger(Rdma.class.getName());
    /** The JNI library's name: {@code META-INF/native/lib}{@value}{@code _<arch>.so} in this module's jar. */
    static final String LIBRARY = "nvmf4j_rdma";
    private static String origin = "not loaded";
    private static final String LIBRARY_FAILURE = loadLibrary();
    private static final String CAUSE = LIBRARY_FAILURE != null ? LIBRARY_FAILURE
            : deviceProblem(Paths.get("/dev/infiniband"));

    private Rdma() {
    }

    private static String loadLibrary() {
        try {
            origin = NativeLibraryLoader.load(LIBRARY, Rdma.class, Rdma::checkVersion);
            LOG.log(System.Logger.Level.DEBUG, "libnvmf4j_rdma loaded: {0}", origin);
            return null;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            return "native library " + LIBRARY + " could not be loaded: " + NativeLibraryLoader.oneLine(e);
        }
    }

    /** Calls the library's side-effect-free ABI-version native; throws when it is missing or differs. */
    private static void checkVersion() {
        int version = Native.abiVersion();
        if (version != Native.ABI_VERSION) {
            throw new UnsatisfiedLinkError("native ABI version " + version + ", Java expects " + Native.ABI_VERSION);
        }
    }

    /** Null when libibverbs lists a device and the device nodes exist, else why not (one line). */
    static String deviceProblem(Path devDir) {
        int count = Native.deviceCount();
        return deviceProblem(count, count < 0 ? Native.strerror(count) : "", Files.isDirectory(devDir),
                Files.exists(devDir.resolve("rdma_cm")));
    }

    static String deviceProblem(int deviceCount, String listError, boolean devDirExists, boolean rdmaCmExists) {
        String devDir = devDirExists ? "" : "; /dev/infiniband does not exist";
        if (deviceCount < 0) {
            return "no RDMA device: ibv_get_device_list failed (" + listError + ")" + devDir;
        }
        if (deviceCount == 0) {
            return "no RDMA device: ibv_get_device_list found none" + devDir;
        }
        if (!devDirExists) {
            return "no RDMA device: " + deviceCount + " listed but /dev/infiniband does not exist (load ib_uverbs)";
        }
        if (!rdmaCmExists) {
            return "no RDMA CM: /dev/infiniband/rdma_cm does not exist (load rdma_ucm)";
        }
        return null;
    }

    /** True when the native library is loaded (with or without a device). */
    public static boolean isLibraryLoaded() {
        return LIBRARY_FAILURE == null;
    }

    /** How the library was loaded ("extracted from the jar to ...", "java.library.path (...)"), for logs. */
    public static String libraryOrigin() {
        return origin;
    }

    /** True when the library is loaded and an RDMA device with its device nodes exists. */
    public static boolean isAvailable() {
        return CAUSE == null;
    }

    /** Why {@link #isAvailable()} is false, in one line; null when available. */
    public static String unavailabilityCause() {
        return CAUSE;
    }

    /** Throws {@link UnsatisfiedLinkError} with the cause unless the library is loaded. */
    public static void ensureLibraryLoaded() {
        if (LIBRARY_FAILURE != null) {
            throw new UnsatisfiedLinkError(LIBRARY_FAILURE);
        }
    }

    /** Throws {@link IllegalStateException} with the cause unless RDMA is available. */
    public static void ensureAvailable() {
        ensureLibraryLoaded();
        if (CAUSE != null) {
            throw new IllegalStateException(CAUSE);
        }
    }

    /** Number of devices libibverbs lists, or a negative errno. */
    public static int deviceCount() {
        ensureLibraryLoaded();
        return Native.deviceCount();
    }

    /**
     * The verbs contexts librdmacm opened, one per device. They are owned by librdmacm and live
     * as long as the process; use them for PDs, CQs and completion channels created before any
     * connection arrives. A CM id's own context is {@link RdmaCm#context(long)}.
     */
    public static long[] deviceContexts() {
        ensureLibraryLoaded();
        return Native.deviceContexts();
    }

    /** The device name of a verbs context ("rxe0", "mlx5_0"), or null for a bad handle. */
    public static String deviceName(long context) {
        return Native.deviceName(context);
    }

    /** {@code ibv_query_device}; throws {@link IllegalStateException} with the errno text on failure. */
    public static DeviceAttributes queryDevice(long context) {
        long[] out = new long[Layout.intValue("device.count")];
        int rc = Native.queryDevice(context, out);
        if (rc < 0) {
            throw new IllegalStateException("ibv_query_device: " + Native.strerror(rc));
        }
        return new DeviceAttributes(out);
    }

    /** {@code ibv_query_port}; throws {@link IllegalStateException} with the errno text on failure. */
    public static PortAttributes queryPort(long context, int port) {
        long[] out = new long[Layout.intValue("port.count")];
        int rc = Native.queryPort(context, port, out);
        if (rc < 0) {
            throw new IllegalStateException("ibv_query_port(" + port + "): " + Native.strerror(rc));
        }
        return new PortAttributes(port, out);
    }

    /** Sets or clears O_NONBLOCK on a file descriptor (event channel, completion channel). */
    public static int setNonBlocking(int fd, boolean nonBlocking) {
        return Native.setNonBlocking(fd, nonBlocking);
    }

    /**
     * Waits until {@code fd} is readable: 1 readable, 0 timeout, negative errno. For waiting on
     * a CM event channel or a completion channel with a timeout.
     */
    public static int pollIn(int fd, int timeoutMs) {
        return Native.pollIn(fd, timeoutMs);
    }
}
