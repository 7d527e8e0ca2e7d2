package io.nvmf4j.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A size on the command line: bytes, or with a binary suffix K, M, G, T (also KiB, MiB, ...). */
final class ByteSize implements ITypeConverter<Long> {
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmgt]?)(i?b)?", Pattern.CASE_INSENSITIVE);

    @Override
    public Long convert(String value) {
        Matcher m = SIZE.matcher(value.trim());
        if (!m.matches()) {
            throw new TypeConversionException("'" + value + "' is not a size (bytes, or with K, M, G, T)");
        }
        int shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
        };
        try {
            long n = Long.parseLong(m.group(1));
            if (n > (Long.MAX_VALUE >> shift)) {
                throw new TypeConversionException("'" + value + "' is too large");
            }
            return n << shift;
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + value + "' is too large");
        }
    }

    /** The number of blocks of {@code blockSize} in {@code bytes}; a usage error when it does not divide. */
    static long blocks(long bytes, int blockSize) {
        if (bytes % blockSize != 0) {
            throw CliException.usage("--size " + bytes + " is not a multiple of the block size " + blockSize);
        }
        return bytes / blockSize;
    }
}
