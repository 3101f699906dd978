import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { App, connectionFrom } from "./App.js"
import "./styles.css"

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App connection={connectionFrom(window.location.search)} />
  </StrictMode>
)
