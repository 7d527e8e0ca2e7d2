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
 * Loads {@code libnvmf4j_rdma} the way Netty loads its native transports: probe a native
 * that has no side effects (the library may already be loaded), then {@code java.library.path},
 * then extract {@code META-INF/native/lib<name>_<arch>.so} from the jar into
 * {@code nvmf4j.native.workdir} (default {@code java.io.tmpdir}), load it and delete the file
 * (unless {@code nvmf4j.native.deleteAfterLoading=false}).
 */
final class NativeLibraryLoader {
    static final String NAME = "nvmf4j_rdma";
    static final String WORKDIR_PROPERTY = "nvmf4j.native.workdir";
    static final String DELETE_PROPERTY = "nvmf4j.native.deleteAfterLoading";

    private NativeLibraryLoader() {
    }

    /** Architecture suffix of the library file: {@code x86_64}, {@code aarch64}, or os.arch as is. */
    static String arch() {
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

    static String resourcePath() {
        return "META-INF/native/lib" + NAME + "_" + arch() + ".so";
    }

    /**
     * Loads the library or throws an {@link UnsatisfiedLinkError} whose message names every
     * attempt. Returns how it was loaded, for the log.
     */
    static String load() {
        List<String> failures = new ArrayList<>();
        if (probe(failures)) {
            return "already loaded";
        }
        String fileName = NAME + "_" + arch();
        for (String libName : new String[] {fileName, NAME}) {
            try {
                System.loadLibrary(libName);
                checkVersion();
                return "java.library.path (" + System.mapLibraryName(libName) + ")";
            } catch (UnsatisfiedLinkError e) {
                failures.add("loadLibrary(" + libName + "): " + oneLine(e));
            }
        }
        try {
            return extractAndLoad();
        } catch (UnsatisfiedLinkError | IOException e) {
            failures.add(resourcePath() + ": " + oneLine(e));
        }
        throw new UnsatisfiedLinkError(String.join("; ", failures));
    }

    private static boolean probe(List<String> failures) {
        try {
            checkVersion();
            return true;
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
    }

    private static void checkVersion() {
        int version = Native.abiVersion();
        if (version != Native.ABI_VERSION) {
            throw new UnsatisfiedLinkError("native ABI version " + version + ", Java expects " + Native.ABI_VERSION);
        }
    }

    private static String extractAndLoad() throws IOException {
        String resource = resourcePath();
        ClassLoader loader = NativeLibraryLoader.class.getClassLoader();
        try (InputStream in = loader == null ? ClassLoader.getSystemResourceAsStream(resource)
                : loader.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("not found on the class path");
            }
            Path dir = Paths.get(System.getProperty(WORKDIR_PROPERTY, System.getProperty("java.io.tmpdir")));
            Files.createDirectories(dir);
            Path file = Files.createTempFile(dir, "lib" + NAME + "_" + arch() + "-", ".so");
            try {
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                System.load(file.toAbsolutePath().toString());
                checkVersion();
                return "extracted from the jar to " + file;
            } finally {
                if (Boolean.parseBoolean(System.getProperty(DELETE_PROPERTY, "true"))) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    static String oneLine(Throwable t) {
        String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        return message.replaceAll("\\s*[\\r\\n]+\\s*", " ").trim();
    }
}
