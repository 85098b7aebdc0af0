package dev.mnemo.neo4j;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * BrowserServer serves Neo4j Browser (the org.neo4j.client:neo4j-browser jar
 * from Maven Central, on the class path) the way the Neo4j server does: the
 * application under /browser/ and, at /, the discovery document the Browser
 * reads to find Bolt. The Browser then talks Bolt over WebSocket straight to
 * the embedded database's Bolt port (the Bolt connector accepts WebSocket on
 * the same port). It listens on 127.0.0.1 only; auth is off like Bolt's.
 */
final class BrowserServer {
    private static final Map<String, String> TYPES = Map.ofEntries(
            Map.entry("html", "text/html; charset=utf-8"),
            Map.entry("js", "application/javascript"),
            Map.entry("css", "text/css"),
            Map.entry("json", "application/json"),
            Map.entry("svg", "image/svg+xml"),
            Map.entry("png", "image/png"),
            Map.entry("jpg", "image/jpeg"),
            Map.entry("ico", "image/x-icon"),
            Map.entry("woff", "font/woff"),
            Map.entry("woff2", "font/woff2"),
            Map.entry("ttf", "font/ttf"),
            Map.entry("map", "application/json"),
            Map.entry("txt", "text/plain; charset=utf-8"));

    private BrowserServer() {}

    static HttpServer start(int port, int boltPort, String neo4jVersion) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        String discovery = "{\"bolt_direct\":\"bolt://127.0.0.1:" + boltPort + "\","
                + "\"bolt_routing\":\"neo4j://127.0.0.1:" + boltPort + "\","
                + "\"neo4j_version\":\"" + neo4jVersion + "\",\"neo4j_edition\":\"community\"}";
        http.createContext("/", ex -> {
            try (ex) {
                String path = ex.getRequestURI().getPath();
                if (path.equals("/")) {
                    String accept = ex.getRequestHeaders().getFirst("Accept");
                    if (accept != null && accept.contains("json")) {
                        send(ex, 200, "application/json", discovery.getBytes(StandardCharsets.UTF_8));
                    } else {
                        ex.getResponseHeaders().set("Location", "/browser/");
                        ex.sendResponseHeaders(303, -1);
                    }
                    return;
                }
                if (!path.startsWith("/browser/") || path.contains("..")) {
                    send(ex, 404, "text/plain", "not found\n".getBytes(StandardCharsets.UTF_8));
                    return;
                }
                String resource = path.endsWith("/") ? path.substring(1) + "index.html" : path.substring(1);
                try (InputStream in = BrowserServer.class.getClassLoader().getResourceAsStream(resource)) {
                    if (in == null) {
                        send(ex, 404, "text/plain", "not found\n".getBytes(StandardCharsets.UTF_8));
                        return;
                    }
                    String ext = resource.substring(resource.lastIndexOf('.') + 1);
                    send(ex, 200, TYPES.getOrDefault(ext, "application/octet-stream"), in.readAllBytes());
                }
            }
        });
        http.setExecutor(Executors.newFixedThreadPool(4));
        http.start();
        return http;
    }

    private static void send(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }
}
