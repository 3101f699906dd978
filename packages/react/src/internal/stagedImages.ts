import type { ResourceContent } from "@tambo-effect/client"
import type { StagedImage } from "../types.js"

let counter = 0
const newId = (): string =>
  typeof crypto !== "undefined" && typeof crypto.randomUUID === "function" ? crypto.randomUUID() : `image-${++counter}`

/** Base64 of bytes, in slices: `String.fromCharCode(...all)` overflows the stack on large files. */
const base64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

/**
 * Whether a file is an image, by its MIME type.
 *
 * @since 0.2.0
 * @category Internal
 */
export const isImage = (file: File): boolean => file.type.startsWith("image/")

/**
 * Reads files into staged images.
 *
 * @since 0.2.0
 * @category Internal
 */
export const stageImages = (files: ReadonlyArray<File>): Promise<Array<StagedImage>> =>
  Promise.all(files.map(async (file) => ({
    id: newId(),
    name: file.name,
    dataUrl: `data:${file.type};base64,${base64(new Uint8Array(await file.arrayBuffer()))}`,
    file,
    size: file.size,
    type: file.type
  })))

/**
 * The image as the API takes it in a user message: a `resource` block with
 * its name, MIME type and base64 data.
 *
 * @since 0.2.0
 * @category Internal
 */
export const imageResource = (image: StagedImage): ResourceContent => ({
  type: "resource",
  resource: { name: image.name, mimeType: image.type, blob: image.dataUrl.slice(image.dataUrl.indexOf(",") + 1) }
})
