package io.nvmf4j.javaengine;

import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.EngineProvider;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.engine.LiveDocument;

import java.io.IOException;
import java.nio.file.Path;

/** Registers the java engine with {@link Engines} (META-INF/services). */
public final class JavaEngineProvider implements EngineProvider {
    @Override
    public String name() {
        return Engines.JAVA;
    }

    @Override
    public String unavailabilityCause() {
        return null;
    }

    @Override
    public Engine start(LiveDocument document, IoObserver observer, Path stateDir) throws IOException {
        return JavaEngine.open(document, observer, stateDir);
    }
}
