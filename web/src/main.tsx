import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { API_URL, BROKER_API_URL } from "./api.ts";
import { Root } from "./Root.tsx";
import "./styles.css";

createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <Root apiUrl={API_URL} brokerUrl={BROKER_API_URL} />
  </StrictMode>,
);
