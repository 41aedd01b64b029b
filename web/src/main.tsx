import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { API_URL, BROKER_API_URL } from "./api.ts";
import "./styles.css";

createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <App apiUrl={API_URL} brokerUrl={BROKER_API_URL} />
  </StrictMode>,
);
