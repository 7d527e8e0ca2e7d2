package io.nvmf4j.dist;

import io.nvmf4j.rdma.NativeLibraryLoader;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JNI libraries in the jars, for both architectures (the build runs on x86-64 and cross-builds the aarch64
 * ones: native/aarch64.sh): each is an ELF for its machine whose RegisterNatives tables register every native
 * its Java class declares, nothing else. The x86-64 libraries must be there; the aarch64 ones must be there
 * whenever this machine has the cross compiler and the arm64 sysroot (./dev.sh setup prepares both), and the
 * spdk engine's may be replaced by the note that says why it was not built.
 */
class NativeLibrariesTest {
    private static final ClassLoader LOADER = NativeLibrariesTest.class.getClassLoader();

    /** Whether this machine can cross-build, asked the way the build asks (native/aarch64.sh). */
    static boolean crossToolchain() throws IOException, InterruptedException {
        Process path = new ProcessBuilder("bash", Path.of("../native/aarch64.sh").toString(), "path")
            .redirectErrorStream(true).start();
        path.getInputStream().readAllBytes();
        assertThat(path.waitFor(30, TimeUnit.SECONDS)).isTrue();
        Process cc = new ProcessBuilder("bash", "-c", "command -v aarch64-linux-gnu-gcc").start();
        cc.getInputStream().readAllBytes();
        assertThat(cc.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return path.exitValue() == 0 && cc.exitValue() == 0;
    }

    @TestFactory
    Stream<DynamicTest> everyLibraryRegistersExactlyItsClassNatives() throws Exception {
        boolean cross = crossToolchain();
        return Stream.of("x86_64", "aarch64").flatMap(arch -> {
            // this machine's own libraries always; the aarch64 ones whenever an x86-64 machine can cross-build
            boolean require = arch.equals(NativeLibraryLoader.arch()) || cross;
            try {
                return NativeLibraryCheck.check(LOADER, arch, require).stream()
                    .map(r -> DynamicTest.dynamicTest(r.line(), () -> {
                        assertThat(r.problems()).as(r.line()).isEmpty();
                        if (require && !r.library().startsWith("libnvmf4j_spdk")) {
                            assertThat(r.present()).as(r.library() + " is built").isTrue();
                        }
                    }));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void theCheckSeesEachLibraryNatives() throws Exception {
        // this machine's rdma library: the table is the one nvmf4j_rdma.c registers, and the Java class's natives
        String arch = NativeLibraryLoader.arch();
        NativeLibraryCheck.Elf elf = NativeLibraryCheck.read(LOADER
            .getResourceAsStream("META-INF/native/libnvmf4j_rdma_" + arch + ".so").readAllBytes());
        assertThat(elf.machine()).isEqualTo(NativeLibraryCheck.MACHINES.get(arch));
        assertThat(elf.exports()).contains("JNI_OnLoad");
        assertThat(elf.registered()).contains("abiVersion()I", "bufferAddress(Ljava/nio/ByteBuffer;)J",
            "allocArray(III)Ljava/nio/ByteBuffer;");
        Set<String> java = NativeLibraryCheck.javaNatives(Class.forName("io.nvmf4j.rdma.Native"));
        assertThat(java).contains("abiVersion()I", "deviceContexts()[J").hasSizeGreaterThan(40);
        assertThat(elf.registered()).isEqualTo(java);
    }

    @Test
    void aMissingNativeIsNamed() throws Exception {
        // a class loader whose rdma library is the bdev one: the check names what is missing both ways
        ClassLoader swapped = swapping("libnvmf4j_rdma_", "libnvmf4j_bdev_");
        List<NativeLibraryCheck.Result> results = NativeLibraryCheck.check(swapped, "x86_64", true);
        NativeLibraryCheck.Result rdma = results.stream()
            .filter(r -> r.library().equals("libnvmf4j_rdma_x86_64.so")).findFirst().orElseThrow();
        assertThat(rdma.problems())
            .contains("libnvmf4j_rdma_x86_64.so: does not name its class io.nvmf4j.rdma.Native")
            .contains("libnvmf4j_rdma_x86_64.so: io.nvmf4j.rdma.Native declares native deviceCount()I, "
                + "which it does not register")
            .anyMatch(p -> p.startsWith("libnvmf4j_rdma_x86_64.so: registers ") && p.endsWith(
                ", which io.nvmf4j.rdma.Native does not declare"));
    }

    @Test
    void theWrongMachineIsNamed() throws Exception {
        ClassLoader swapped = swapping("_aarch64.so", "_x86_64.so");
        NativeLibraryCheck.Result bdev = NativeLibraryCheck.check(swapped, "aarch64", true).stream()
            .filter(r -> r.library().equals("libnvmf4j_bdev_aarch64.so")).findFirst().orElseThrow();
        assertThat(bdev.problems()).containsExactly("libnvmf4j_bdev_aarch64.so: ELF machine 62, aarch64 is 183");
    }

    /** The test's class path, with each resource name's {@code from} read as {@code to}. */
    private static ClassLoader swapping(String from, String to) {
        return new ClassLoader(LOADER) {
            @Override
            public java.io.InputStream getResourceAsStream(String name) {
                return super.getResourceAsStream(name.replace(from, to));
            }
        };
    }

    @Test
    void notAnElfIsRefused() {
        assertThatThrownBy(() -> NativeLibraryCheck.read("#!/bin/sh\n".repeat(10).getBytes(StandardCharsets.US_ASCII)))
            .isInstanceOf(IllegalArgumentException.class).hasMessage("not an ELF file");
    }

    @Test
    void noUnknownLibraryInTheJars() throws Exception {
        assertThat(NativeLibraryCheck.unknownEntries(LOADER)).isEmpty();
    }
}
