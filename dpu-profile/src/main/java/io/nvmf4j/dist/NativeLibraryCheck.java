package io.nvmf4j.dist;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks the JNI libraries the jars carry ({@code META-INF/native/lib<name>_<arch>.so}, the files
 * NativeLibraryLoader extracts) without loading them, so an aarch64 library is checked on an x86-64 build
 * machine: each is a 64-bit little-endian ELF shared object for its architecture's machine, exports
 * {@code JNI_OnLoad}, names its Java class, and its {@code RegisterNatives} tables (the
 * {@code JNINativeMethod} arrays, found through the library's relocations: name, signature and a function in
 * an executable section) register exactly the native methods that class declares, each with its JNI
 * signature. A native the Java side declares but the library does not register would fail at load time on
 * the target machine; this fails the build instead.
 *
 * <p>{@code java io.nvmf4j.dist.NativeLibraryCheck [--require] ARCH...} checks the class path's libraries for
 * each architecture (x86_64, aarch64), prints one line per library and exits 1 on any problem; with
 * {@code --require} a missing library is a problem (the spdk engine's library may instead be replaced by the
 * build's {@code nvmf4j_spdk[_ARCH].unavailable}, which says why it was not built).
 */
public final class NativeLibraryCheck {
    /** Each JNI library of nvmf4j and the class its JNI_OnLoad registers natives on. */
    public static final Map<String, String> LIBRARIES = Map.of(
        "nvmf4j_rdma", "io.nvmf4j.rdma.Native",
        "nvmf4j_bdev", "io.nvmf4j.os.FileNative",
        "nvmf4j_rbd", "io.nvmf4j.bdev.RbdNative",
        "nvmf4j_spdk", "io.nvmf4j.spdk.SpdkNative");
    /** The library that a build may leave out, saying why in an .unavailable resource. */
    static final String OPTIONAL = "nvmf4j_spdk";
    /** ELF e_machine per architecture suffix (EM_X86_64, EM_AARCH64). */
    public static final Map<String, Integer> MACHINES = Map.of("x86_64", 62, "aarch64", 183);
    /** R_*_RELATIVE and the absolute 64-bit relocation per machine. */
    private static final Map<Integer, int[]> RELOCATIONS = Map.of(62, new int[] {8, 1}, 183, new int[] {1027, 257});
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");
    private static final Pattern DESCRIPTOR = Pattern.compile("\\((\\[*([ZBCSIJFD]|L[^;]+;))*\\)\\[*([VZBCSIJFD]|L[^;]+;)");

    private NativeLibraryCheck() {
    }

    /** What one ELF shared object says about itself. */
    public record Elf(int machine, Set<String> exports, Set<String> registered, byte[] bytes) {
        boolean contains(String text) {
            byte[] needle = (text + '\0').getBytes(StandardCharsets.US_ASCII);
            outer:
            for (int i = 0; i + needle.length <= bytes.length; i++) {
                for (int j = 0; j < needle.length; j++) {
                    if (bytes[i + j] != needle[j]) {
                        continue outer;
                    }
                }
                return true;
            }
            return false;
        }
    }

    private record Section(String name, int type, long flags, long addr, long offset, long size, int link) {
    }

    /** Reads an ELF64 little-endian shared object; throws IllegalArgumentException when it is not one. */
    public static Elf read(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (bytes.length < 64 || b.getInt(0) != 0x464c457f) {
            throw new IllegalArgumentException("not an ELF file");
        }
        if (bytes[4] != 2 || bytes[5] != 1) {
            throw new IllegalArgumentException("not a 64-bit little-endian ELF (class " + bytes[4] + ", data " + bytes[5] + ")");
        }
        if (b.getShort(16) != 3) {
            throw new IllegalArgumentException("not a shared object (e_type " + b.getShort(16) + ")");
        }
        int machine = Short.toUnsignedInt(b.getShort(18));
        long shoff = b.getLong(0x28);
        int shentsize = Short.toUnsignedInt(b.getShort(0x3a));
        int shnum = Short.toUnsignedInt(b.getShort(0x3c));
        int shstrndx = Short.toUnsignedInt(b.getShort(0x3e));
        long[][] raw = new long[shnum][];
        for (int i = 0; i < shnum; i++) {
            int at = Math.toIntExact(shoff + (long) i * shentsize);
            raw[i] = new long[] {Integer.toUnsignedLong(b.getInt(at)), Integer.toUnsignedLong(b.getInt(at + 4)),
                b.getLong(at + 8), b.getLong(at + 16), b.getLong(at + 24), b.getLong(at + 32),
                Integer.toUnsignedLong(b.getInt(at + 40))};
        }
        List<Section> sections = new ArrayList<>();
        for (long[] s : raw) {
            sections.add(new Section(cString(bytes, raw[shstrndx][4] + s[0]), (int) s[1], s[2], s[3], s[4], s[5],
                (int) s[6]));
        }
        // relocated 64-bit words: offset -> the address stored there once loaded
        int[] types = RELOCATIONS.getOrDefault(machine, new int[] {-1, -1});
        Map<Long, Long> words = new TreeMap<>();
        Set<String> exports = new TreeSet<>();
        for (Section s : sections) {
            if (s.type == 11) { // SHT_DYNSYM: the exported (defined, global) functions
                Section strings = sections.get(s.link);
                for (long at = s.offset; at + 24 <= s.offset + s.size; at += 24) {
                    int info = bytes[(int) at + 4] & 0xff;
                    int shndx = Short.toUnsignedInt(b.getShort((int) at + 6));
                    if (shndx != 0 && info >> 4 == 1 && (info & 0xf) == 2) {
                        exports.add(cString(bytes, strings.offset + Integer.toUnsignedLong(b.getInt((int) at))));
                    }
                }
            }
        }
        for (Section s : sections) {
            if (s.type != 4) { // SHT_RELA
                continue;
            }
            Section symbols = s.link == 0 ? null : sections.get(s.link);
            for (long at = s.offset; at + 24 <= s.offset + s.size; at += 24) {
                long offset = b.getLong((int) at);
                long info = b.getLong((int) at + 8);
                long addend = b.getLong((int) at + 16);
                int type = (int) info;
                if (type == types[0]) {
                    words.put(offset, addend);
                } else if (type == types[1] && symbols != null) {
                    long sym = symbols.offset + (info >>> 32) * 24;
                    long value = b.getLong((int) sym + 8);
                    if (Short.toUnsignedInt(b.getShort((int) sym + 6)) != 0) {
                        words.put(offset, value + addend);
                    }
                }
            }
        }
        // JNINativeMethod {char *name; char *signature; void *fnPtr}: three relocated words in a row
        Set<String> registered = new TreeSet<>();
        for (Map.Entry<Long, Long> e : words.entrySet()) {
            long at = e.getKey();
            Long sig = words.get(at + 8);
            Long fn = words.get(at + 16);
            if (sig == null || fn == null) {
                continue;
            }
            String name = stringAt(bytes, sections, e.getValue());
            String descriptor = stringAt(bytes, sections, sig);
            if (name != null && descriptor != null && IDENTIFIER.matcher(name).matches()
                && DESCRIPTOR.matcher(descriptor).matches() && executable(sections, fn)) {
                registered.add(name + descriptor);
            }
        }
        return new Elf(machine, exports, registered, bytes);
    }

    private static boolean executable(List<Section> sections, long addr) {
        return sections.stream().anyMatch(s -> (s.flags & 4) != 0 && addr >= s.addr && addr < s.addr + s.size);
    }

    /** The NUL-terminated string at a loaded address, read from the section that holds it, or null. */
    private static String stringAt(byte[] bytes, List<Section> sections, long addr) {
        for (Section s : sections) {
            if (s.type != 8 && s.addr != 0 && (s.flags & 2) != 0 && addr >= s.addr && addr < s.addr + s.size) {
                return cString(bytes, s.offset + (addr - s.addr));
            }
        }
        return null;
    }

    private static String cString(byte[] bytes, long offset) {
        int start = Math.toIntExact(offset);
        int end = start;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, start, end - start, StandardCharsets.ISO_8859_1);
    }

    /** The native methods a class declares, as name + JNI descriptor (what RegisterNatives is given). */
    public static Set<String> javaNatives(Class<?> type) {
        Set<String> natives = new TreeSet<>();
        for (Method m : type.getDeclaredMethods()) {
            if (Modifier.isNative(m.getModifiers())) {
                StringBuilder d = new StringBuilder(m.getName()).append('(');
                for (Class<?> p : m.getParameterTypes()) {
                    d.append(descriptor(p));
                }
                natives.add(d.append(')').append(descriptor(m.getReturnType())).toString());
            }
        }
        return natives;
    }

    private static String descriptor(Class<?> c) {
        if (c.isArray()) {
            return c.getName().replace('.', '/');
        }
        if (!c.isPrimitive()) {
            return "L" + c.getName().replace('.', '/') + ";";
        }
        return switch (c.getName()) {
            case "boolean" -> "Z";
            case "byte" -> "B";
            case "char" -> "C";
            case "short" -> "S";
            case "int" -> "I";
            case "long" -> "J";
            case "float" -> "F";
            case "double" -> "D";
            case "void" -> "V";
            default -> throw new IllegalArgumentException(c.getName());
        };
    }

    /** One library's result: its line for the log, and its problems (empty when it passed or is absent). */
    public record Result(String library, boolean present, String line, List<String> problems) {
    }

    /**
     * Checks every library for {@code arch} as {@code loader} finds it. {@code require}: a missing library is
     * a problem (the optional one only when no .unavailable resource says why).
     */
    public static List<Result> check(ClassLoader loader, String arch, boolean require) throws IOException {
        Integer machine = MACHINES.get(arch);
        if (machine == null) {
            throw new IllegalArgumentException("unknown architecture " + arch + " (one of " + MACHINES.keySet() + ")");
        }
        List<Result> results = new ArrayList<>();
        for (Map.Entry<String, String> lib : new TreeMap<>(LIBRARIES).entrySet()) {
            String file = "lib" + lib.getKey() + "_" + arch + ".so";
            List<String> problems = new ArrayList<>();
            byte[] bytes;
            try (InputStream in = loader.getResourceAsStream("META-INF/native/" + file)) {
                bytes = in == null ? null : in.readAllBytes();
            }
            if (bytes == null) {
                String why = unavailable(loader, lib.getKey(), arch);
                if (why != null && lib.getKey().equals(OPTIONAL)) {
                    results.add(new Result(file, false, file + ": not built (" + why + ")", problems));
                    continue;
                }
                if (require) {
                    problems.add(file + ": missing from the jars");
                }
                results.add(new Result(file, false, file + ": missing", problems));
                continue;
            }
            Elf elf;
            try {
                elf = read(bytes);
            } catch (IllegalArgumentException | IndexOutOfBoundsException | ArithmeticException e) {
                problems.add(file + ": unreadable ELF: " + e.getMessage());
                results.add(new Result(file, true, file + ": unreadable", problems));
                continue;
            }
            if (elf.machine() != machine) {
                problems.add(file + ": ELF machine " + elf.machine() + ", " + arch + " is " + machine);
            }
            if (!elf.exports().contains("JNI_OnLoad")) {
                problems.add(file + ": does not export JNI_OnLoad");
            }
            if (!elf.contains(lib.getValue().replace('.', '/'))) {
                problems.add(file + ": does not name its class " + lib.getValue());
            }
            Set<String> java;
            try {
                java = javaNatives(Class.forName(lib.getValue(), false, loader));
            } catch (ClassNotFoundException | LinkageError e) {
                problems.add(file + ": its class " + lib.getValue() + " cannot be read: " + e);
                java = Set.of();
            }
            for (String m : java) {
                if (!elf.registered().contains(m)) {
                    problems.add(file + ": " + lib.getValue() + " declares native " + m + ", which it does not register");
                }
            }
            for (String m : elf.registered()) {
                if (!java.contains(m)) {
                    problems.add(file + ": registers " + m + ", which " + lib.getValue() + " does not declare");
                }
            }
            String line = String.format("%s: %s ELF, JNI_OnLoad, %d natives of %s registered%s", file,
                arch, elf.registered().size(), lib.getValue(), problems.isEmpty() ? "" : " - " + problems.size() + " problem(s)");
            results.add(new Result(file, true, line, problems));
        }
        return results;
    }

    /** Why the build left {@code name} out for {@code arch} (its .unavailable resource), or null. */
    static String unavailable(ClassLoader loader, String name, String arch) throws IOException {
        for (String resource : new String[] {name + "_" + arch + ".unavailable", name + ".unavailable"}) {
            try (InputStream in = loader.getResourceAsStream("META-INF/native/" + resource)) {
                if (in != null) {
                    return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
                }
            }
        }
        return null;
    }

    /**
     * The META-INF/native entries of the jars (or class directories) that hold the libraries' classes that are
     * not lib(name)_(arch).so of a known name and architecture, nor an .unavailable note: a library this check
     * would not see.
     */
    public static List<String> unknownEntries(ClassLoader loader) throws IOException {
        Pattern known = Pattern.compile("lib(" + String.join("|", LIBRARIES.keySet()) + ")_("
            + String.join("|", MACHINES.keySet()) + ")\\.so|[a-z0-9_]+\\.unavailable");
        Map<Path, Boolean> roots = new LinkedHashMap<>();
        for (String type : LIBRARIES.values()) {
            try {
                var source = Class.forName(type, false, loader).getProtectionDomain().getCodeSource();
                if (source != null) {
                    roots.put(Path.of(source.getLocation().toURI()), true);
                }
            } catch (ClassNotFoundException | URISyntaxException e) {
                throw new IOException("cannot locate " + type + ": " + e, e);
            }
        }
        List<String> unknown = new ArrayList<>();
        for (Path root : roots.keySet()) {
            for (String entry : nativeEntries(root)) {
                if (!known.matcher(entry).matches()) {
                    unknown.add(root.getFileName() + "!/META-INF/native/" + entry);
                }
            }
        }
        return unknown;
    }

    private static List<String> nativeEntries(Path root) throws IOException {
        List<String> names = new ArrayList<>();
        if (Files.isDirectory(root)) {
            Path dir = root.resolve("META-INF/native");
            if (Files.isDirectory(dir)) {
                try (Stream<Path> files = Files.list(dir)) {
                    files.forEach(f -> names.add(f.getFileName().toString()));
                }
            }
            return names;
        }
        try (JarFile jar = new JarFile(root.toFile())) {
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                String name = e.nextElement().getName();
                if (name.startsWith("META-INF/native/") && name.length() > "META-INF/native/".length()
                    && !name.endsWith("/")) {
                    names.add(name.substring("META-INF/native/".length()));
                }
            }
        }
        return names;
    }

    public static void main(String[] args) throws IOException {
        boolean require = false;
        List<String> arches = new ArrayList<>();
        for (String a : args) {
            if (a.equals("--require")) {
                require = true;
            } else {
                arches.add(a);
            }
        }
        if (arches.isEmpty()) {
            System.err.println("usage: NativeLibraryCheck [--require] ARCH... (" + MACHINES.keySet() + ")");
            System.exit(2);
        }
        ClassLoader loader = NativeLibraryCheck.class.getClassLoader();
        List<String> problems = new ArrayList<>(unknownEntries(loader).stream()
            .map(e -> e + ": a native library this check does not know").toList());
        for (String arch : arches) {
            for (Result r : check(loader, arch, require)) {
                System.out.println("native: " + r.line());
                problems.addAll(r.problems());
            }
        }
        problems.forEach(p -> System.err.println("native: PROBLEM: " + p));
        if (!problems.isEmpty()) {
            System.exit(1);
        }
    }
}
