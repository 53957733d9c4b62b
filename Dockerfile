# The image `kubectl quota guard install` runs in the cluster: the plugin's one binary, with the
# guard's serve command as default, as a non-root user (the Deployment also makes the root
# filesystem read-only; the binary writes nothing).
#
#   docker build -t registry.example/kubectl-quota:v0.1.0 .
#   kubectl quota guard install --image registry.example/kubectl-quota:v0.1.0
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist --bin kubectl-quota

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/dist/kubectl-quota /usr/local/bin/kubectl-quota
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/kubectl-quota"]
CMD ["guard", "serve", "--listen=0.0.0.0:8443", "--tls-cert-file=/etc/kubectl-quota-guard/tls/tls.crt", "--tls-private-key-file=/etc/kubectl-quota-guard/tls/tls.key"]
