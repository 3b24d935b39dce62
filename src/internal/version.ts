/** The package version, compared when a second copy of the elements meets the first on a page. */
export const VERSION = '0.1.0';
