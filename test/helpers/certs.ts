import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function openssl(args: string[], cwd: string): void {
  const r = spawnSync("openssl", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.error?.message ?? r.stderr}`);
}

/** Files of a test's own certificate authority and of a server certificate it signed. */
export interface TestCertificates {
  dir: string;
  /** The CA's certificate (PEM): what a client trusts. */
  caFile: string;
  /** The server's certificate and unencrypted key (PEM), for 127.0.0.1 and localhost. */
  certFile: string;
  keyFile: string;
  /** The same certificate and key as a PKCS#12 keystore, for the Kafka broker. */
  keystoreFile: string;
  keystorePassword: string;
  /** Another CA that signed nothing here: a client trusting it must refuse the server. */
  otherCaFile: string;
}

/**
 * A CA and a server certificate made with openssl in a temporary folder, valid two days,
 * for TLS listeners of the tests' own (a Kafka SASL_SSL listener, a RabbitMQ TLS one).
 */
export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), "shop-certs-"));
  const req = ["req", "-newkey", "rsa:2048", "-nodes", "-sha256"];
  for (const ca of ["ca", "other-ca"])
    openssl(
      [
        ...req,
        "-x509",
        "-days",
        "2",
        "-keyout",
        `${ca}.key`,
        "-out",
        `${ca}.pem`,
        "-subj",
        `/CN=shop test ${ca}`,
      ],
      dir,
    );
  openssl([...req, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], dir);
  writeFileSync(join(dir, "san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "2",
      "-sha256",
      "-extfile",
      "san.cnf",
      "-out",
      "server.pem",
    ],
    dir,
  );
  const keystorePassword = `ks-${randomUUID()}`;
  openssl(
    [
      "pkcs12",
      "-export",
      "-in",
      "server.pem",
      "-inkey",
      "server.key",
      "-name",
      "kafka",
      "-out",
      "server.p12",
      "-passout",
      `pass:${keystorePassword}`,
    ],
    dir,
  );
  // A broker started as another user (RabbitMQ runs as rabbitmq) must read them.
  chmodSync(dir, 0o755);
  for (const f of ["ca.pem", "server.pem", "server.key", "server.p12"])
    chmodSync(join(dir, f), 0o644);
  return {
    dir,
    caFile: join(dir, "ca.pem"),
    certFile: join(dir, "server.pem"),
    keyFile: join(dir, "server.key"),
    keystoreFile: join(dir, "server.p12"),
    keystorePassword,
    otherCaFile: join(dir, "other-ca.pem"),
  };
}
