; NSIS installer for Scriptorium on Windows. BUILT ON WINDOWS ONLY (not built or tested on the team's Linux machines).
;
;   1. python installer\build.py [--variant cpu]       -> installer\dist\<variant>\scriptorium\
;   2. makensis /DVARIANT=cpu /DVERSION=0.1.0 installer\windows\scriptorium.nsi
;                                                      -> installer\dist\Scriptorium-0.1.0-setup[-cpu].exe
;
; Per-user install (no administrator rights), like the Linux install script: %LOCALAPPDATA%\Programs\Scriptorium,
; a Start-menu shortcut, an "Open with" entry for PDFs, and an uninstaller in Apps & features.
; The user's data (%APPDATA% / ~\.local\share\scriptorium, downloaded models) is never removed.

Unicode true
!include "MUI2.nsh"

!ifndef VERSION
  !define VERSION "0.1.0"
!endif
!ifndef VARIANT
  !define VARIANT "default"
!endif
!define APPNAME "Scriptorium"
!define APPID "org.scriptorium.Scriptorium"
!define BUNDLE "..\dist\${VARIANT}\scriptorium"
!define UNINSTKEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${APPID}"
!if "${VARIANT}" == "cpu"
  !define SUFFIX "-cpu"
!else
  !define SUFFIX ""
!endif

Name "${APPNAME} ${VERSION}"
OutFile "..\dist\${APPNAME}-${VERSION}-setup${SUFFIX}.exe"
InstallDir "$LOCALAPPDATA\Programs\${APPNAME}"
InstallDirRegKey HKCU "${UNINSTKEY}" "InstallLocation"
RequestExecutionLevel user
SetCompressor /SOLID lzma

!define MUI_ICON "..\..\resources\icons\scriptorium.ico"
!define MUI_UNICON "..\..\resources\icons\scriptorium.ico"
!define MUI_FINISHPAGE_RUN "$INSTDIR\scriptorium.exe"
!insertmacro MUI_PAGE_WELCOME
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Section "Install"
  SetOutPath "$INSTDIR"
  File /r "${BUNDLE}\*.*"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortcut "$SMPROGRAMS\${APPNAME}.lnk" "$INSTDIR\scriptorium.exe" "" "$INSTDIR\scriptorium.exe" 0
  ; "Open with Scriptorium" for PDFs and images
  WriteRegStr HKCU "Software\Classes\Applications\scriptorium.exe\shell\open\command" "" '"$INSTDIR\scriptorium.exe" "%1"'
  WriteRegStr HKCU "Software\Classes\.pdf\OpenWithList\scriptorium.exe" "" ""
  WriteRegStr HKCU "Software\Classes\.png\OpenWithList\scriptorium.exe" "" ""
  WriteRegStr HKCU "Software\Classes\.jpg\OpenWithList\scriptorium.exe" "" ""
  ; Apps & features
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayName" "${APPNAME}"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayIcon" "$INSTDIR\scriptorium.exe"
  WriteRegStr HKCU "${UNINSTKEY}" "Publisher" "The Scriptorium developers"
  WriteRegStr HKCU "${UNINSTKEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTKEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoRepair" 1
SectionEnd

Section "Uninstall"
  Delete "$SMPROGRAMS\${APPNAME}.lnk"
  DeleteRegKey HKCU "Software\Classes\Applications\scriptorium.exe"
  DeleteRegValue HKCU "Software\Classes\.pdf\OpenWithList\scriptorium.exe" ""
  DeleteRegKey HKCU "Software\Classes\.pdf\OpenWithList\scriptorium.exe"
  DeleteRegKey HKCU "Software\Classes\.png\OpenWithList\scriptorium.exe"
  DeleteRegKey HKCU "Software\Classes\.jpg\OpenWithList\scriptorium.exe"
  DeleteRegKey HKCU "${UNINSTKEY}"
  RMDir /r "$INSTDIR\_internal"
  Delete "$INSTDIR\scriptorium.exe"
  Delete "$INSTDIR\scriptorium-cli.exe"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
SectionEnd
