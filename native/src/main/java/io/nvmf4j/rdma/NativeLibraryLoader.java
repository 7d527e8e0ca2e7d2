package io.nvmf4j.rdma;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Loads a JNI library of nvmf4j ({@code libnvmf4j_rdma}, {@code libnvmf4j_bdev}, {@code libnvmf4j_rbd},
 * {@code libnvmf4j_spdk}) the way Netty loads its native transports: probe a native that has no side effects (the
 * library may already be loaded), then {@code java.library.path}, then extract
 * {@code META-INF/native/lib<name>_<arch>.so} from the jar into {@code nvmf4j.native.workdir} (default
 * {@code java.io.tmpdir}), load it and delete the file (unless {@code nvmf4j.native.deleteAfterLoading=false}).
 *
 * <p>It lives in the {@code native} module with the C half of the contract ({@code nvmf4j_jni.h}, JNI_OnLoad's ABI
 * check), below every module that carries a JNI library, so that a module which loads a library of its own does
 * not depend on the RDMA binding to do it.
 */
public final class NativeLibraryLoader {
    static final String WORKDIR_PROPERTY = "nvmf4j.native.workdir";
    static final String DELETE_PROPERTY = "nvmf4j.native.deleteAfterLoading";

    private NativeLibraryLoader() {
    }

    /** Architecture suffix of the library file: {@code x86_64}, {@code aarch64}, or os.arch as is. */
    public static String arch() {
        String arch = System.getProperty("os.arch", "unknown").toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64":
            case "x86_64":
            case "x86-64":
                return "x86_64";
            case "aarch64":
            case "arm64":
                return "aarch64";
            default:
                return arch;
        }
    }

    public static String resourcePath(String name) {
        return "META-INF/native/lib" + name + "_" + arch() + ".so";
    }

    /**
     * Loads library {@code name} or throws an {@link UnsatisfiedLinkError} whose message names every
     * attempt. {@code checkVersion} calls the library's side-effect-free ABI-version native and throws
     * {@link UnsatisfiedLinkError} when it is missing or differs; {@code owner}'s class loader finds the
     * resource. Returns how it was loaded, for the log.
     */
    public static String load(String name, Class<?> owner, Runnable checkVersion) {
        List<String> failures = new ArrayList<>();
        if (probe(checkVersion)) {
            return "already loaded";
        }
        String fileName = name + "_" + arch();
        for (String libName : new String[] {fileName, name}) {
            try {
                System.loadLibrary(libName);
                checkVersion.run();
                return "java.library.path (" + System.mapLibraryName(libName) + ")";
            } catch (UnsatisfiedLinkError e) {
                failures.add("loadLibrary(" + libName + "): " + oneLine(e));
            }
        }
        try {
            return extractAndLoad(name, owner, checkVersion);
        } catch (UnsatisfiedLinkError | IOException e) {
            failures.add(resourcePath(name) + ": " + oneLine(e));
        }
        throw new UnsatisfiedLinkError(String.join("; ", failures));
    }

    private static boolean probe(Runnable checkVersion) {
        try {
            checkVersion.run();
            return true;
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
    }

    private static String extractAndLoad(String name, Class<?> owner, Runnable checkVersion) throws IOException {
        String resource = resourcePath(name);
        ClassLoader loader = owner.getClassLoader();
        try (InputStream in = loader == null ? ClassLoader.getSystemResourceAsStream(resource)
                : loader.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("not found on the class path");
            }
            Path dir = Paths.get(System.getProperty(WORKDIR_PROPERTY, System.getProperty("java.io.tmpdir")));
            Files.createDirectories(dir);
            Path file = Files.createTempFile(dir, "lib" + name + "_" + arch() + "-", ".so");
            try {
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                System.load(file.toAbsolutePath().toString());
                checkVersion.run();
                return "extracted from the jar to " + file;
            } finally {
                if (Boolean.parseBoolean(System.getProperty(DELETE_PROPERTY, "true"))) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    /**
     * {@link #load} for a library whose absence is not fatal: null when it loaded, else why not (one line,
     * "native library NAME could not be loaded: ..."). {@code abiVersion} calls the library's ABI-version native;
     * it must answer {@code expected}.
     */
    public static String loadOrExplain(String name, Class<?> owner, java.util.function.IntSupplier abiVersion,
                                       int expected) {
        try {
            load(name, owner, () -> {
                int version = abiVersion.getAsInt();
                if (version != expected) {
                    throw new UnsatisfiedLinkError("native ABI version " + version + ", Java expects " + expected);
                }
            });
            return null;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            return "native library " + name + " could not be loaded: " + oneLine(e);
        }
    }

    /** A throwable's message on one line (for causes kept in a log-friendly field). */
    public static String oneLine(Throwable t) {
        String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        return message.replaceAll("\\s*[\\r\\n]+\\s*", " ").trim();
    }
}
