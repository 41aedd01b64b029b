import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The API base URL is a build/dev setting: VITE_API_URL (default http://localhost:8080).
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  server: { host: "localhost", port: 5173, strictPort: true },
  preview: { host: "localhost", port: 5173, strictPort: true },
});
