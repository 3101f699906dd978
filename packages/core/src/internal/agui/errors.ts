/**
 * `AgUiError` lives in `TamboError.ts`, in the `TamboError` union; this path
 * stays for the modules that import it from here.
 *
 * @since 0.2.0
 */
export {
  /**
   * @since 0.2.0
   * @category Errors
   */
  AgUiError
} from "../../TamboError.js"
