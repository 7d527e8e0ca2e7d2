package io.nvmf4j.transport;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.BindFailures;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** A failed bind says what is wrong in plain words, never the socket library's text. */
class BindFailuresTest {
    @ParameterizedTest(name = "{2}")
    @CsvSource(delimiter = '|', value = {
        "127.0.0.1|4420|bind(..) failed with error(-98): Address already in use|address 127.0.0.1:4420 is already in use",
        "::1|4420|bind(..) failed: Address already in use|address [::1]:4420 is already in use",
        "10.9.9.9|4420|bind(..) failed with error(-99): Cannot assign requested address|address 10.9.9.9 is not an address of this host",
        "127.0.0.1|80|bind(..) failed with error(-13): Permission denied|not allowed to listen on 127.0.0.1:80 (ports below 1024 need CAP_NET_BIND_SERVICE)",
        "127.0.0.1|4420|bind(..) failed with error(-22): Invalid argument|cannot listen on 127.0.0.1:4420: Invalid argument"})
    void libraryTextBecomesAPlainMessage(String address, int port, String library, String plain) {
        assertThat(BindFailures.describe(address, port, new IOException(library))).isEqualTo(plain);
    }

    @Test
    void aBindExceptionWithoutTextStillSaysWhere() {
        assertThat(BindFailures.describe("127.0.0.1", 1, new BindException())).isEqualTo("cannot listen on 127.0.0.1:1");
    }

    /** The java engine refuses a listener on a taken port with 409 and the plain reason. */
    @Test
    void addingAListenerOnATakenPortSaysItIsInUse() throws Exception {
        TargetConfig c = ConfigStore.defaultConfig();
        c.subsystems.get(0).listeners.get(0).port = 0;
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
             ConfigController<Engine> e = Engines.start(c, IoObserver.NONE)) {
            ControlException x = catchThrowableOfType(ControlException.class, () -> e.addListener(
                ConfigStore.DEFAULT_NQN, new ListenerConfig("tcp", "127.0.0.1", busy.getLocalPort())));
            assertThat(x.kind()).isEqualTo(ControlException.Kind.CONFLICT);
            assertThat(x.getMessage()).isEqualTo("address 127.0.0.1:" + busy.getLocalPort() + " is already in use");
        }
    }
}
