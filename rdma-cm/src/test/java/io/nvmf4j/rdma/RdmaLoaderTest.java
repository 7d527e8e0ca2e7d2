package io.nvmf4j.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RdmaLoaderTest {

    @Test
    void libraryLoadsWithoutADevice() {
        assertThat(Rdma.isLibraryLoaded()).as(Rdma.unavailabilityCause()).isTrue();
        assertThat(Native.abiVersion()).isEqualTo(Native.ABI_VERSION);
        assertThat(Rdma.libraryOrigin()).isNotEqualTo("not loaded");
    }

    /** This host has no RDMA device: the cause names the verbs result and the missing /dev/infiniband. */
    @Test
    void causeOnAHostWithoutDevice() {
        assumeFalse(Files.exists(Paths.get("/dev/infiniband")), "this host has /dev/infiniband");
        Rdma.ensureLibraryLoaded(); // Native's methods are bound once Rdma has loaded the library
        int count = Native.deviceCount();
        assertThat(Rdma.isAvailable()).isFalse();
        assertThat(Rdma.unavailabilityCause())
                .matches("no RDMA device: ibv_get_device_list (found none|failed \\([^)]+\\));"
                        + " /dev/infiniband does not exist")
                .isEqualTo(count < 0
                        ? "no RDMA device: ibv_get_device_list failed (" + Native.strerror(count)
                                + "); /dev/infiniband does not exist"
                        : "no RDMA device: ibv_get_device_list found none; /dev/infiniband does not exist");
    }

    @Test
    void causeTextForEachSituation() {
        assertThat(Rdma.deviceProblem(-38, "Function not implemented", false, false))
                .isEqualTo("no RDMA device: ibv_get_device_list failed (Function not implemented);"
                        + " /dev/infiniband does not exist");
        assertThat(Rdma.deviceProblem(0, "", true, true)).isEqualTo("no RDMA device: ibv_get_device_list found none");
        assertThat(Rdma.deviceProblem(0, "", false, false))
                .isEqualTo("no RDMA device: ibv_get_device_list found none; /dev/infiniband does not exist");
        assertThat(Rdma.deviceProblem(2, "", false, false))
                .isEqualTo("no RDMA device: 2 listed but /dev/infiniband does not exist (load ib_uverbs)");
        assertThat(Rdma.deviceProblem(1, "", true, false))
                .isEqualTo("no RDMA CM: /dev/infiniband/rdma_cm does not exist (load rdma_ucm)");
        assertThat(Rdma.deviceProblem(1, "", true, true)).isNull();
    }

    @Test
    void ensureAvailableThrowsTheCause() {
        assumeFalse(Rdma.isAvailable());
        try {
            Rdma.ensureAvailable();
            throw new AssertionError("no exception");
        } catch (IllegalStateException e) {
            assertThat(e).hasMessage(Rdma.unavailabilityCause());
        }
    }

    /** A fresh JVM extracts the library into nvmf4j.native.workdir, loads it and deletes the file. */
    @Test
    void extractsIntoTheWorkdirAndDeletes(@TempDir Path workdir) throws Exception {
        List<String> out = runStatus("-Dnvmf4j.native.workdir=" + workdir);
        assertThat(out).contains("loaded=true");
        assertThat(out).anySatisfy(l -> assertThat(l).startsWith("origin=extracted from the jar to " + workdir
                + "/lib" + Rdma.LIBRARY + "_" + NativeLibraryLoader.arch() + "-"));
        try (Stream<Path> left = Files.list(workdir)) {
            assertThat(left).isEmpty();
        }
    }

    /** When nothing can be loaded the JVM carries on and the cause says why, in one line. */
    @Test
    void unloadableLibraryIsACauseNotACrash(@TempDir Path dir) throws Exception {
        Path notADir = Files.writeString(dir.resolve("file"), "x");
        List<String> out = runStatus("-Dnvmf4j.native.workdir=" + notADir.resolve("sub"));
        assertThat(out).contains("loaded=false", "available=false");
        assertThat(out).anySatisfy(l -> assertThat(l)
                .startsWith("cause=native library nvmf4j_rdma could not be loaded: loadLibrary(nvmf4j_rdma_")
                .contains("META-INF/native/libnvmf4j_rdma_" + NativeLibraryLoader.arch() + ".so"));
    }

    private static List<String> runStatus(String property) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add(property);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(StatusMain.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(text).isZero();
        return List.of(text.split("\n"));
    }

    /** Prints the loader's verdict, one key=value a line. */
    public static final class StatusMain {
        public static void main(String[] args) {
            System.out.println("loaded=" + Rdma.isLibraryLoaded());
            System.out.println("available=" + Rdma.isAvailable());
            System.out.println("origin=" + Rdma.libraryOrigin());
            System.out.println("cause=" + Rdma.unavailabilityCause());
        }
    }
}
